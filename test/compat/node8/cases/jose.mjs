import { SignJWT, jwtVerify, generateKeyPair, exportJWK } from 'jose';

export async function handler() {
  const secret = new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!');
  const hs = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS256' }).setSubject('ada').sign(secret);
  const { payload } = await jwtVerify(hs, secret);
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const rs = await new SignJWT({ n: 1 }).setProtectedHeader({ alg: 'RS256' }).setIssuedAt().sign(privateKey);
  const verified = await jwtVerify(rs, publicKey);
  const jwk = await exportJWK(publicKey);
  return { hs, payload, rsAlg: verified.protectedHeader.alg, rsN: verified.payload.n, jwkKty: jwk.kty, jwkE: jwk.e };
}
