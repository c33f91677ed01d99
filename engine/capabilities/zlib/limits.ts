/**
 * zlib's entries of the one table of host-work limits (engine/host-work/limits.ts, which spreads
 * them in): no imports, bundled into the sandboxes as the table is.
 */
export const ZLIB_LIMITS = {
  /** Input of one brotli compression at quality 10 or 11 (about 1 MB/s). */
  brotliSlowInputBytes: 4 * 1024 * 1024,
} as const;
