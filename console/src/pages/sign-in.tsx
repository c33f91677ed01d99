import { useState } from 'preact/hooks';
import type { Session } from '../api';
import { ErrorNote, useAction } from '../parts/feedback';
import { signIn } from '../session';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [accountId, setAccountId] = useState('');
  const [key, setKey] = useState('');
  const { busy, error, run } = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => onSignedIn(await signIn(accountId, key)));
  };

  return (
    <main class="sign-in" id="main">
      <h1>islet console</h1>
      <form onSubmit={submit} aria-describedby="sign-in-note">
        <label>
          Account id
          <input name="account" autocomplete="username" spellcheck={false} value={accountId} onInput={(e) => setAccountId(e.currentTarget.value)} required />
        </label>
        <label>
          API key
          <input name="key" type="password" autocomplete="current-password" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
        </label>
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p id="sign-in-note" class="hint">
        The key stays in this tab's session storage until you sign out or close the tab, and goes only to this server, in the X-Service-Api-Key header.
      </p>
    </main>
  );
}
