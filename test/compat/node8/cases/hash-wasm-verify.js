const { argon2id, argon2Verify } = require('hash-wasm');

// A password hashed with argon2id, then checked with argon2Verify, in the same call (a sign-up that
// logs the user in, a password change). Each argon2 call makes three WebAssembly memories.
exports.handler = async () => {
  const hash = await argon2id({ password: 'correct horse', salt: new Uint8Array(16).fill(9), parallelism: 1, iterations: 2, memorySize: 19456, hashLength: 32, outputType: 'encoded' });
  return {
    right: await argon2Verify({ password: 'correct horse', hash }),
    wrong: await argon2Verify({ password: 'battery staple', hash }),
  };
};
