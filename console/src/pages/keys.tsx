import { useRef, useState } from 'preact/hooks';
import { accountPath, api, type KeyScope, type Session } from '../api';
import { formatDate } from '../format';
import { Confirm } from '../parts/confirm';
import { DoneNote, ErrorNote, useAction } from '../parts/feedback';
import { useLoad } from '../use-load';
import type { KeyDescription } from '../../../engine/wire';

/** The account's keys: list (never the key itself), create (shown once, with a copy button), revoke. */
export function KeysPage({ session, onOwnKeyRevoked }: { session: Session; onOwnKeyRevoked: () => void }) {
  const keys = useLoad(() => api<{ keys: KeyDescription[] }>(session.key, 'GET', accountPath(session, '/keys')), [session.key]);
  const [created, setCreated] = useState<{ apiKey: string; key: KeyDescription }>();
  const [done, setDone] = useState<string>();
  const { busy, error, run } = useAction();

  const revoke = (name: string) =>
    run(async () => {
      await api(session.key, 'DELETE', accountPath(session, `/keys/${encodeURIComponent(name)}`));
      setDone(`Key ${name} is revoked: it is refused from now on.`);
      if (name === session.keyName) return onOwnKeyRevoked();
      keys.reload();
    });

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <p class="hint">
        An <strong>invoke</strong> key can only call this account's secured functions: give that one to functions (<code>SERVICE_API_KEY</code>) and to clients. An <strong>admin</strong> key can do
        everything, keys included.
      </p>
      <CreateKey session={session} onCreated={(c) => (setCreated(c), setDone(undefined), keys.reload())} />
      {created && <NewKey created={created} onDone={() => setCreated(undefined)} />}
      <ErrorNote message={error ?? keys.error?.message} />
      <DoneNote message={done} />
      {keys.data && (
        <table class="data" data-testid="keys">
          <caption class="visually-hidden">Keys in use</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.keys.map((k) => (
              <tr key={k.id}>
                <th scope="row">
                  {k.name}
                  {k.name === session.keyName && <span class="hint"> (this session)</span>}
                </th>
                <td>{k.scope}</td>
                <td>{formatDate(k.createdAt)}</td>
                <td>{k.lastUsedAt ? formatDate(k.lastUsedAt) : 'never'}</td>
                <td class="actions">
                  <Confirm ask="Revoke…" askLabel={`Revoke key ${k.name}`} confirm={`Revoke ${k.name}`} busy={busy} onConfirm={() => revoke(k.name)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function CreateKey({ session, onCreated }: { session: Session; onCreated: (c: { apiKey: string; key: KeyDescription }) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<KeyScope>('invoke');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const body = name.trim() ? { name: name.trim(), scope } : { scope };
      onCreated(await api<{ apiKey: string; key: KeyDescription }>(session.key, 'POST', accountPath(session, '/keys'), body));
      setName('');
    });
  };
  return (
    <form class="card row" onSubmit={submit} aria-label="Create a key">
      <label class="grow">
        Name <span class="hint">(optional)</span>
        <input name="key-name" value={name} onInput={(e) => setName(e.currentTarget.value)} spellcheck={false} />
      </label>
      <label>
        Scope
        <select name="key-scope" value={scope} onChange={(e) => setScope(e.currentTarget.value as KeyScope)}>
          <option value="invoke">invoke: call functions</option>
          <option value="admin">admin: everything</option>
        </select>
      </label>
      <button type="submit" disabled={busy}>
        Create key
      </button>
      <ErrorNote message={error} />
    </form>
  );
}

/** The new key, shown this once: the server keeps only its digest. */
function NewKey({ created, onDone }: { created: { apiKey: string; key: KeyDescription }; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.apiKey);
      setCopied('Copied.');
    } catch {
      // The clipboard API needs a secure context (https or localhost): select the key for Ctrl+C instead.
      field.current?.select();
      setCopied('Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  };
  return (
    <div class="card new-key" role="region" aria-labelledby="new-key-title">
      <h2 id="new-key-title">
        New {created.key.scope} key “{created.key.name}”
      </h2>
      <p>Copy it now: it is shown only this once, and cannot be read again.</p>
      <div class="row">
        <input ref={field} class="grow secret" readOnly value={created.apiKey} aria-label="The new key" data-testid="new-key" onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" class="quiet" onClick={onDone}>
          Done
        </button>
      </div>
      <p role="status" class="hint">
        {copied}
      </p>
    </div>
  );
}
