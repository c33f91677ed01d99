const Mustache = require('mustache');

exports.handler = () => ({ html: Mustache.render('{{#items}}<li>{{name}}</li>{{/items}}{{^none}}empty{{/none}} {{unsafe}}', { items: [{ name: 'a' }, { name: 'b' }], unsafe: '<x>' }) });
