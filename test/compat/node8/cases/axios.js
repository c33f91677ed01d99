const axios = require('axios');

exports.handler = async () => {
  const get = await axios.get(`${process.env.COMPAT_URL}/json?x=1`, { headers: { 'x-test': 'axios' } });
  const post = await axios.post(`${process.env.COMPAT_URL}/echo`, { hello: 'world' });
  let notFound;
  try {
    await axios.get(`${process.env.COMPAT_URL}/missing`);
  } catch (e) {
    notFound = e.response.status;
  }
  return { status: get.status, data: get.data, echoed: post.data, notFound };
};
