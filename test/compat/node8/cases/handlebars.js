const Handlebars = require('handlebars');

Handlebars.registerHelper('upper', (s) => String(s).toUpperCase());

exports.handler = () => {
  const template = Handlebars.compile('<ul>{{#each people}}<li>{{upper name}} ({{age}})</li>{{/each}}</ul>{{{raw}}} {{escaped}}');
  return { html: template({ people: [{ name: 'ada', age: 36 }, { name: 'alan', age: 41 }], raw: '<b>x</b>', escaped: '<i>' }) };
};
