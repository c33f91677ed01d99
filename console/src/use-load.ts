import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `deps` change (and every `everyMs`, when given), keeping the last good answer
 * while the next one is on its way. An answer that arrives after a newer request was made is dropped.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], everyMs?: number): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    load().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (err: Error) => {
        if (mine !== generation.current) return;
        setError(err);
        setLoading(false);
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(() => {
    run();
    if (!everyMs) return undefined;
    const timer = setInterval(run, everyMs);
    return () => clearInterval(timer);
  }, [run, everyMs]);
  useEffect(() => () => void generation.current++, []);
  return { data, error, loading, reload: run };
}
