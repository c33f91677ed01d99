import { createServer } from 'node:net';

/**
 * Fails with `port <n> is in use` when another program (or another islet) listens on the port.
 * uWebSockets.js binds with SO_REUSEPORT, which would share the port with any such listener in
 * silence; this bind has no SO_REUSEPORT, so it fails whenever anything holds the port. The
 * workers of one supervisor share the port on purpose, after this check.
 */
export function assertPortFree(host: string, port: number, what = 'port', hint = ''): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(err.code === 'EADDRINUSE' ? `${what} ${port} is in use (on ${host}): another program or islet is listening on it${hint}` : `cannot listen on ${host}:${port}: ${err.message}`));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * A free port for `--port 0`. uWebSockets.js sets SO_REUSEPORT only on a given port (on port 0 each
 * listener would get a port of its own), so the workers are given one concrete port to share.
 */
export async function pickFreePort(host: string, not?: number): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen({ host, port: 0, exclusive: true }, () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    // The first pick's probe is closed: the system may hand out its port again.
    if (port !== not) return port;
  }
}

/** The console port's own words when it is taken. */
export const CONSOLE_PORT_HINT = ' (--console-port chooses another; 0 serves no console)';

/** Checks (or picks) the function port and the console's; the ports the workers will share. */
export async function claimPorts(host: string, port: number, consolePort: number | undefined): Promise<{ port: number; consolePort: number | undefined }> {
  if (port === 0) port = await pickFreePort(host);
  else await assertPortFree(host, port);
  if (consolePort === 0) consolePort = await pickFreePort(host, port);
  else if (consolePort !== undefined) await assertPortFree(host, consolePort, "the console's port", CONSOLE_PORT_HINT);
  return { port, consolePort };
}
