/**
 * Work small enough to run on the server's thread, in and out: about 0.1 ms of hashing or
 * ciphering. Everything larger, and everything whose cost does not follow its size (key derivation
 * and generation, RSA private-key operations, brotli, encrypted keys), runs on the host-work
 * threads while the isolate waits. An entry of the host-work table (limits.ts), in a file of its
 * own: the node8 runtime needs this one number, and bundling the table cost it about 200 bytes.
 */
export const MAIN_THREAD_BYTES = 64 * 1024;
