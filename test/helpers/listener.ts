import { createServer } from 'node:net';

export interface CountingListener {
  port: number;
  /** Connections it has accepted (each is closed at once). */
  readonly connections: number;
  close(): void;
}

/** A TCP listener on the host that escape probes try to reach; it only counts who got through. */
export async function startCountingListener(): Promise<CountingListener> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    get connections() {
      return connections;
    },
    close: () => server.close(),
  };
}
