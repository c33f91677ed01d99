/**
 * Runs a full garbage collection (tests run with --expose-gc) so that isolated-vm's handles of
 * disposed isolates are finalised now. Left for the collection V8 may run while the process exits,
 * after isolated-vm has torn down, their finalisers abort the process (isolated-vm 5.0.4:
 * "IsolateEnvironment::GetCurrent(): Assertion `environment != nullptr' failed"). Every test
 * process also runs one when it exits (scripts/tap-preload.js).
 */
export function collectIsolateHandles(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
