const xml2js = require('xml2js');

exports.handler = async () => {
  const parsed = await xml2js.parseStringPromise('<feed><entry lang="en"><title>One</title></entry><entry><title>Two</title></entry></feed>');
  const xml = new xml2js.Builder({ headless: true }).buildObject({ greeting: { _: 'hi', $: { to: 'Ada' } } });
  return { titles: parsed.feed.entry.map((e) => e.title[0]), lang: parsed.feed.entry[0].$.lang, xml };
};
