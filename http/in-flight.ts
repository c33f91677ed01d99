/** Requests being answered, and how many began (the server's drain waits for both to be still). */
export class ActiveCounter {
  active = 0;
  started = 0;

  begin(): void {
    this.active++;
    this.started++;
  }

  end(): void {
    this.active--;
  }
}

const TICK_MS = 20;

/** Resolves once no request has been in flight, or begun, for `ms` (one already on the wire still gets in). */
export function quiet(counter: ActiveCounter, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let idleTicks = 0;
    let started = counter.started;
    const timer = setInterval(() => {
      idleTicks = counter.active === 0 && counter.started === started ? idleTicks + 1 : 0;
      started = counter.started;
      if (idleTicks * TICK_MS >= ms) {
        clearInterval(timer);
        resolve();
      }
    }, TICK_MS);
  });
}
