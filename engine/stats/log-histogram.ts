/**
 * A log-linear histogram of durations (HDR Histogram's layout): exact 1 µs buckets below 16 µs,
 * then every power of two split into 16 buckets of equal width. A bucket is at most 1/16 of its
 * lower bound wide, so its middle is within 1/32 (3.125%) of every duration in it: a percentile
 * read from these buckets is within 3.125% (or 1 µs, below 16 µs) of a duration some call had, and
 * kept between the smallest and largest durations seen (whole µs), never past the largest. Up to
 * 2^31 µs (35 min), which is past every timeout: 448 buckets.
 *
 * The fixed buckets before (Prometheus's, 100 µs to 30 s) were interpolated inside: a function
 * whose calls all timed out at 10 s showed p50 20.0 s and p99 29.6 s, a time no call had.
 */

const SUB_BITS = 4;
const SUB = 1 << SUB_BITS;
/** Durations past this are counted in the last bucket. */
export const MAX_US = 2 ** 31 - 1;
export const BUCKETS = bucketOf(MAX_US) + 1;
/** The largest relative difference between a bucket's middle and a duration in it. */
export const RELATIVE_ERROR = 1 / (2 * SUB);
/** Names the layout, so that processes of another islet version (a rolling restart) are not added up with it. */
export const HISTOGRAM_LAYOUT = `log-linear-${SUB_BITS}`;

/** The bucket of a duration in µs (fractions of a µs are dropped). */
export function bucketOf(us: number): number {
  const v = us >= MAX_US ? MAX_US : us > 0 ? Math.floor(us) : 0;
  if (v < SUB) return v;
  const exponent = 31 - Math.clz32(v);
  return (exponent - SUB_BITS + 1) * SUB + ((v >>> (exponent - SUB_BITS)) - SUB);
}

/** The smallest duration of a bucket, µs. */
export function bucketLowerUs(bucket: number): number {
  if (bucket < SUB) return bucket;
  const group = Math.floor(bucket / SUB);
  return (SUB + (bucket % SUB)) * 2 ** (group - 1);
}

/** A bucket's width, µs. */
export function bucketWidthUs(bucket: number): number {
  return bucket < SUB ? 1 : 2 ** (Math.floor(bucket / SUB) - 1);
}

/**
 * A bucket and its count as one number below 2^32, the way slots keep them: the bucket times 2^23
 * plus the count (a count of 2^23 or more takes several entries of the same bucket). Half the
 * memory of a pair, for histories that keep hundreds of slots per function.
 */
const COUNT_LIMIT = 2 ** 23;

export function entryBucket(entry: number): number {
  return Math.floor(entry / COUNT_LIMIT);
}

export function entryCount(entry: number): number {
  return entry % COUNT_LIMIT;
}

/** Appends a bucket's count to `out` as entries. */
function pushEntries(out: number[], bucket: number, count: number): void {
  let left = count;
  while (left >= COUNT_LIMIT) {
    out.push(bucket * COUNT_LIMIT + COUNT_LIMIT - 1);
    left -= COUNT_LIMIT - 1;
  }
  if (left > 0) out.push(bucket * COUNT_LIMIT + left);
}

/** The calls that entries (from `from`) count. */
export function countEntries(entries: ArrayLike<number>, from: number): number {
  let calls = 0;
  for (let i = from; i < entries.length; i++) calls += entries[i]! % COUNT_LIMIT;
  return calls;
}

/**
 * The q-quantile, in µs, of entries sorted by bucket (from `from`) holding `calls` durations
 * between `minUs` and `maxUs`: the middle of the bucket that holds the call of that rank (nearest
 * rank), kept within the smallest and largest durations seen. Undefined without calls.
 */
export function quantileUs(entries: ArrayLike<number>, from: number, calls: number, minUs: number, maxUs: number, q: number): number | undefined {
  if (calls <= 0) return undefined;
  const rank = Math.max(1, Math.ceil(q * calls));
  let seen = 0;
  for (let i = from; i < entries.length; i++) {
    seen += entries[i]! % COUNT_LIMIT;
    if (seen >= rank) {
      const bucket = entryBucket(entries[i]!);
      const middle = bucketLowerUs(bucket) + bucketWidthUs(bucket) / 2;
      return Math.min(Math.max(middle, minUs), maxUs);
    }
  }
  return maxUs;
}

/** Entries `a` (from `aFrom`) and `b` (from `bFrom`), both sorted by bucket, added up: a new sorted list. */
export function mergeEntries(a: ArrayLike<number>, aFrom: number, b: ArrayLike<number>, bFrom: number): number[] {
  const out: number[] = [];
  let i = aFrom;
  let j = bFrom;
  while (i < a.length || j < b.length) {
    const bucket = Math.min(i < a.length ? entryBucket(a[i]!) : Infinity, j < b.length ? entryBucket(b[j]!) : Infinity);
    let count = 0;
    while (i < a.length && entryBucket(a[i]!) === bucket) count += a[i++]! % COUNT_LIMIT;
    while (j < b.length && entryBucket(b[j]!) === bucket) count += b[j++]! % COUNT_LIMIT;
    pushEntries(out, bucket, count);
  }
  return out;
}

/** Hash slots of the recorder's table: distinct buckets in one sample before it turns into a full array. */
const TABLE_SLOTS = 32;

/**
 * Durations recorded on the call path between two samples, with no allocation: a small
 * open-addressed table of (bucket, count), which turns into a full array of counts (1.8 KB) the
 * first time more than 32 distinct buckets come between two samples. Most functions' calls fall
 * in a few buckets; the table is 256 bytes.
 */
export class DurationRecorder {
  /** (bucket + 1, count) per slot; bucket + 1 = 0 is an empty slot. */
  private table: Uint32Array | undefined = new Uint32Array(TABLE_SLOTS * 2);
  private full: Uint32Array | undefined;
  private used = 0;
  calls = 0;
  minUs = 0;
  maxUs = 0;

  record(us: number): void {
    const bucket = bucketOf(us);
    const v = us >= MAX_US ? MAX_US : us > 0 ? us : 0;
    if (this.calls === 0 || v < this.minUs) this.minUs = v;
    if (v > this.maxUs) this.maxUs = v;
    this.calls++;
    if (this.full !== undefined) {
      this.full[bucket]!++;
      return;
    }
    const table = this.table!;
    const key = bucket + 1;
    let at = (Math.imul(key, 0x9e3779b1) >>> 27) & (TABLE_SLOTS - 1);
    for (let probe = 0; probe < TABLE_SLOTS; probe++) {
      const k = table[at * 2]!;
      if (k === key) {
        table[at * 2 + 1]!++;
        return;
      }
      if (k === 0) {
        table[at * 2] = key;
        table[at * 2 + 1] = 1;
        this.used++;
        return;
      }
      at = (at + 1) & (TABLE_SLOTS - 1);
    }
    // More distinct buckets than the table holds: a full array from now on (made once per function).
    this.full = new Uint32Array(BUCKETS);
    for (let s = 0; s < TABLE_SLOTS; s++) this.full[table[s * 2]! - 1] = table[s * 2 + 1]!;
    this.full[bucket]!++;
    this.table = undefined;
  }

  /** The durations recorded since the last take, as entries sorted by bucket, and forgets them. */
  take(): number[] {
    const entries: number[] = [];
    if (this.full !== undefined) {
      const full = this.full;
      for (let b = 0; b < BUCKETS; b++) if (full[b] !== 0) pushEntries(entries, b, full[b]!);
      full.fill(0);
    } else if (this.used > 0) {
      const table = this.table!;
      const found: number[] = [];
      for (let s = 0; s < TABLE_SLOTS; s++) if (table[s * 2] !== 0) found.push(s);
      found.sort((x, y) => table[x * 2]! - table[y * 2]!);
      for (const s of found) pushEntries(entries, table[s * 2]! - 1, table[s * 2 + 1]!);
      table.fill(0);
      this.used = 0;
    }
    this.calls = 0;
    this.minUs = 0;
    this.maxUs = 0;
    return entries;
  }
}
