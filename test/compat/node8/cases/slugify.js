const slugify = require('slugify');

exports.handler = () => ({ slug: slugify('Hello World! Ça va?', { lower: true, strict: true }), dashed: slugify('a  b   c') });
