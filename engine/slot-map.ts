/** Slots per generation: far above the entries one instance can hold (a call in flight holds a connection). */
const SLOTS = 2 ** 21;
/** Generations wrap here, which keeps every id below 2^53 (exact as a JavaScript number). */
const GENERATIONS = 2 ** 31;

/**
 * Short-lived values found by id: calls in flight, timers, pending operations. An id names a
 * reused slot plus the slot's generation, so a late answer for an entry already gone (a call that
 * timed out) never reaches the entry that took its slot afterwards.
 *
 * Not a Map, on purpose: a long-lived Map's hash table is in the old generation, and every rehash
 * (one per few dozen entries) leaves the dead table still pointing at young values. The scavenger
 * takes those pointers as roots, so after the first full GC every entry and all it held survived
 * each young-generation GC until the next full one. For calls in flight that was 1.8 MB promoted
 * and 3–5 ms pauses per scavenge on the server's main thread under load. An array that is only
 * written in place leaves no dead copies behind.
 */
export class SlotMap<T> {
  private readonly slots: (T | undefined)[] = [];
  private readonly generations: number[] = [];
  private readonly free: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(value: T): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.slots.length;
      if (slot === SLOTS) throw new RangeError(`more than ${SLOTS} entries at once`);
      this.slots.push(undefined);
      this.generations.push(0);
    }
    this.slots[slot] = value;
    this.count++;
    return this.idOf(slot);
  }

  get(id: number): T | undefined {
    const slot = slotOf(id);
    return this.idOf(slot) === id ? this.slots[slot] : undefined;
  }

  /** Removes and returns the entry, or undefined when it was already taken (or never added). */
  take(id: number): T | undefined {
    const value = this.get(id);
    if (value === undefined) return undefined;
    const slot = slotOf(id);
    this.slots[slot] = undefined;
    this.generations[slot] = (this.generations[slot]! + 1) % GENERATIONS;
    this.free.push(slot);
    this.count--;
    return value;
  }

  /** Ids of every entry, in slot order. */
  ids(): number[] {
    const ids: number[] = [];
    for (let slot = 0; slot < this.slots.length; slot++) {
      if (this.slots[slot] !== undefined) ids.push(this.idOf(slot));
    }
    return ids;
  }

  /** The id of the entry now in `slot`. */
  private idOf(slot: number): number {
    return this.generations[slot]! * SLOTS + slot;
  }
}

/** The slot an id of a SlotMap names (SlotMirror keys entries by it). */
export function slotOf(id: number): number {
  return id % SLOTS;
}

/**
 * Entries keyed by ids that a SlotMap elsewhere made (in the sandbox: untrusted), kept at the id's
 * slot for the same reason as SlotMap. An entry is found only by its exact id; an id whose slot is
 * not below `maxSlots` is refused, so a sandbox cannot make this grow past that.
 */
export class SlotMirror<T> {
  private readonly entries: ({ id: number; value: T } | undefined)[] = [];

  constructor(private readonly maxSlots: number) {}

  /** Stores `value` under `id`; false when the id is refused. */
  set(id: number, value: T): boolean {
    if (!Number.isSafeInteger(id) || id < 0) return false;
    const slot = slotOf(id);
    if (slot >= this.maxSlots) return false;
    while (this.entries.length < slot) this.entries.push(undefined);
    this.entries[slot] = { id, value };
    return true;
  }

  /** Removes and returns the entry stored under exactly this id. */
  take(id: number): T | undefined {
    if (!Number.isSafeInteger(id) || id < 0) return undefined;
    const slot = slotOf(id);
    const entry = this.entries[slot];
    if (entry === undefined || entry.id !== id) return undefined;
    this.entries[slot] = undefined;
    return entry.value;
  }

  /** Removes and returns every entry. */
  takeAll(): T[] {
    const values: T[] = [];
    for (const entry of this.entries) if (entry !== undefined) values.push(entry.value);
    this.entries.length = 0;
    return values;
  }
}
