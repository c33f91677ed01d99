const { argon2id } = require('hash-wasm');

// argon2id at OWASP's first recommendation (19 MiB, 2 passes, 1 lane): its WebAssembly memory
// declares a maximum of 2 GiB, which islet once counted against the function's 128 MB. The salt is
// fixed, so the hash answered must be the very one Node computes.
exports.handler = async () => {
  const salt = new Uint8Array(16).fill(7);
  return { hash: await argon2id({ password: 'correct horse', salt, parallelism: 1, iterations: 2, memorySize: 19456, hashLength: 32, outputType: 'encoded' }) };
};
