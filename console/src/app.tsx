import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Session } from './api';
import { FunctionPage } from './pages/function';
import { FunctionsPage } from './pages/functions';
import { KeysPage } from './pages/keys';
import { NeedsAdmin } from './parts/feedback';
import { SignIn } from './pages/sign-in';
import { href, useRoute, type Route } from './router';
import { clearSession, loadSession, saveSession } from './session';

export function App() {
  const [session, setSession] = useState(loadSession);
  const route = useRoute();
  if (!session) {
    return (
      <SignIn
        onSignedIn={(s) => {
          saveSession(s);
          setSession(s);
        }}
      />
    );
  }
  const signOut = () => {
    clearSession();
    setSession(undefined);
  };
  return (
    <Layout session={session} route={route} onSignOut={signOut}>
      <Page session={session} route={route} onSignOut={signOut} />
    </Layout>
  );
}

function Page({ session, route, onSignOut }: { session: Session; route: Route; onSignOut: () => void }) {
  switch (route.page) {
    case 'function':
      return <FunctionPage key={route.name} session={session} name={route.name} />;
    case 'keys':
      // Revoking the key this tab signed in with ends the session: every later request would be refused.
      return session.scope === 'admin' ? <KeysPage session={session} onOwnKeyRevoked={onSignOut} /> : <NeedsAdmin what="The account's keys" />;
    default:
      return <FunctionsPage session={session} />;
  }
}

function Layout({ session, route, onSignOut, children }: { session: Session; route: Route; onSignOut: () => void; children: ComponentChildren }) {
  const main = useRef<HTMLElement>(null);
  // A new page takes the focus, so keyboard and screen-reader users start at its top.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [route.page, route.page === 'function' ? route.name : '']);
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href({ page: 'functions' })}>
          islet console
        </a>
        <nav aria-label="Pages">
          <a href={href({ page: 'functions' })} aria-current={route.page !== 'keys' ? 'page' : undefined}>
            Functions
          </a>
          <a href={href({ page: 'keys' })} aria-current={route.page === 'keys' ? 'page' : undefined}>
            Keys
          </a>
        </nav>
        <div class="who">
          <span title="Account id">{session.accountId}</span>
          <span class={`scope scope-${session.scope}`} title="The scope of the key you signed in with">
            {session.keyName ? `${session.keyName} · ` : ''}
            {session.scope} key
          </span>
          <button type="button" class="quiet" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      {session.scope === 'invoke' && (
        <p class="notice" role="note">
          You signed in with an <strong>invoke</strong> key: you can call this account's functions. Listing them, their logs, charts, versions and the account's keys need an <strong>admin</strong>{' '}
          key.
        </p>
      )}
      <main id="main" ref={main} tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
