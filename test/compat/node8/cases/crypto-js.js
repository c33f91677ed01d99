const CryptoJS = require('crypto-js');

exports.handler = () => {
  const hmac = CryptoJS.HmacSHA256('message', 'key').toString();
  const encrypted = CryptoJS.AES.encrypt('secret text', 'passphrase').toString();
  const decrypted = CryptoJS.AES.decrypt(encrypted, 'passphrase').toString(CryptoJS.enc.Utf8);
  return { hmac, sha1: CryptoJS.SHA1('abc').toString(), decrypted, base64: CryptoJS.enc.Base64.stringify(CryptoJS.enc.Utf8.parse('islet')) };
};
