/** Slots per generation: far above the calls one instance can have in flight (each holds a connection). */
const SLOTS = 2 ** 21;
/** Generations wrap here, which keeps every id below 2^53 (exact as a JavaScript number). */
const GENERATIONS = 2 ** 31;

/**
 * Calls sent into an isolate and not answered yet, found by id. An id names a reused slot plus the
 * slot's generation, so a late answer for a call already settled (it timed out) never reaches the
 * call that took its slot afterwards.
 *
 * Not a Map, on purpose: a long-lived Map's hash table is in the old generation, and every rehash
 * (one per few dozen calls) leaves the dead table still pointing at young calls. The scavenger takes
 * those pointers as roots, so after the first full GC every call and all it held survived each
 * young-generation GC until the next full one: 1.8 MB promoted and 3–5 ms pauses per scavenge on
 * the server's main thread under load. An array that is only written in place has no dead copies.
 */
export class RunningCalls<T> {
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
      if (slot === SLOTS) throw new RangeError(`more than ${SLOTS} calls in flight on one instance`);
      this.slots.push(undefined);
      this.generations.push(0);
    }
    this.slots[slot] = value;
    this.count++;
    return this.generations[slot]! * SLOTS + slot;
  }

  get(id: number): T | undefined {
    const slot = id % SLOTS;
    return this.generations[slot] === (id - slot) / SLOTS ? this.slots[slot] : undefined;
  }

  /** Removes and returns the call, or undefined when it was already taken (or never added). */
  take(id: number): T | undefined {
    const value = this.get(id);
    if (value === undefined) return undefined;
    const slot = id % SLOTS;
    this.slots[slot] = undefined;
    this.generations[slot] = (this.generations[slot]! + 1) % GENERATIONS;
    this.free.push(slot);
    this.count--;
    return value;
  }

  /** Ids of every call still running, in slot order. */
  ids(): number[] {
    const ids: number[] = [];
    for (let slot = 0; slot < this.slots.length; slot++) {
      if (this.slots[slot] !== undefined) ids.push(this.generations[slot]! * SLOTS + slot);
    }
    return ids;
  }
}
