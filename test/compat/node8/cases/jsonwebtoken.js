const jwt = require('jsonwebtoken');
const { generateKeyPairSync } = require('crypto');

exports.handler = () => {
  const hs = jwt.sign({ sub: 'ada', admin: true }, 'shared-secret', { algorithm: 'HS256', noTimestamp: true });
  const hsClaims = jwt.verify(hs, 'shared-secret');
  let tampered;
  try {
    jwt.verify(`${hs.slice(0, -2)}xx`, 'shared-secret');
  } catch (e) {
    tampered = e.name;
  }
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rs = jwt.sign({ sub: 'grace' }, privateKey, { algorithm: 'RS256', expiresIn: '1h' });
  const rsClaims = jwt.verify(rs, publicKey, { algorithms: ['RS256'] });
  return { hs, hsClaims, tampered, rsSub: rsClaims.sub, rsHeader: jwt.decode(rs, { complete: true }).header };
};
