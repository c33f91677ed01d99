const sanitizeHtml = require('sanitize-html');

exports.handler = () => ({
  clean: sanitizeHtml('<p onclick="x()">Hi <script>alert(1)</script><a href="javascript:x">l</a><b>bold</b></p>'),
  restricted: sanitizeHtml('<p>x<img src="a.png"></p>', { allowedTags: ['p'] }),
});
