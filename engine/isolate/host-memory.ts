/**
 * Bytes the host holds for one instance outside its isolate: response bodies of its `fetch` calls
 * while they arrive, and results of its operations waiting to go in. isolated-vm counts none of
 * them, so a function could make the host hold gigabytes (100 fetches of 6 MiB each took 1.2 GB);
 * they are held to the function's memory limit, beside its isolate's own.
 */
export interface HostMemoryBudget {
  /** Takes `bytes` from the budget; false (and nothing taken) when they do not fit. */
  reserve(bytes: number): boolean;
  release(bytes: number): void;
}

export class HostMemory implements HostMemoryBudget {
  held = 0;

  constructor(readonly limitBytes: number) {}

  reserve(bytes: number): boolean {
    if (this.held + bytes > this.limitBytes) return false;
    this.held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }

  /** The refusal's message: what the limit is. */
  refusal(what: string): string {
    return `${what}: the bytes the host holds for this function instance would pass its memory limit of ${Math.round(this.limitBytes / (1024 * 1024))} MB`;
  }
}
