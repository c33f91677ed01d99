/** The host callback of Node's guest-only modules: async_hooks' (guest/async_hooks.ts). No imports. */
export interface NodeCallbacks {
  /**
   * From now on, sends this isolate's calls one per entry (once AsyncLocalStorage is used): promise
   * jobs then run before the next call starts, so they are known to belong to theirs.
   */
  unbatch(): void;
}
