import { useState } from 'preact/hooks';

/** An error to read at once (announced by screen readers); nothing when there is none. */
export function ErrorNote({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** What an action did, announced politely (the element stays, so that changes are read). */
export function DoneNote({ message }: { message: string | undefined }) {
  return (
    <p role="status" class="done">
      {message}
    </p>
  );
}

/** Runs one action at a time: `busy` while it runs, `error` with its message when it fails. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

/** What an invoke key cannot open, said instead of an error from the server. */
export function NeedsAdmin({ what }: { what: string }) {
  return (
    <p class="notice-inline" role="note">
      {what} need an <strong>admin</strong> key; this session's key has the <strong>invoke</strong> scope. Sign in with an admin key to see them.
    </p>
  );
}
