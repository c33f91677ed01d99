const ejs = require('ejs');

exports.handler = () => ({ html: ejs.render('<% for (const p of people) { %><p><%= p %></p><% } %><%- raw %>', { people: ['Ada', '<Alan>'], raw: '<hr>' }) });
