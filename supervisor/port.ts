import { createServer } from 'node:net';

/**
 * Fails with `port <n> is in use` when another program (or another islet) listens on the port.
 * uWebSockets.js binds with SO_REUSEPORT, which would share the port with any such listener in
 * silence; this bind has no SO_REUSEPORT, so it fails whenever anything holds the port. The
 * workers of one supervisor share the port on purpose, after this check.
 */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(err.code === 'EADDRINUSE' ? `port ${port} is in use (on ${host}): another program or islet is listening on it` : `cannot listen on ${host}:${port}: ${err.message}`));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * A free port for `--port 0`. uWebSockets.js sets SO_REUSEPORT only on a given port (on port 0 each
 * listener would get a port of its own), so the workers are given one concrete port to share.
 */
export function pickFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port: 0, exclusive: true }, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
