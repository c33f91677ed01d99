import { useEffect, useState } from 'preact/hooks';

/** The console's pages, addressed by the URL's fragment (`#/functions/hello`), so the server serves one page. */
export type Route = { page: 'functions' } | { page: 'function'; name: string } | { page: 'keys' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/');
  if (parts[0] === 'functions' && parts[1]) return { page: 'function', name: decodeURIComponent(parts[1]) };
  if (parts[0] === 'keys') return { page: 'keys' };
  return { page: 'functions' };
}

export function href(route: Route): string {
  switch (route.page) {
    case 'function':
      return `#/functions/${encodeURIComponent(route.name)}`;
    case 'keys':
      return '#/keys';
    default:
      return '#/';
  }
}

/** The current route, following the fragment as it changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
