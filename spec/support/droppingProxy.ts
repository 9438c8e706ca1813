/**
 * Test helper: a TCP proxy on 127.0.0.1 in front of a `ws://` executor whose connections can
 * be cut (reset, like a network failure), and which counts the connections it carried.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface DroppingProxy {
  /** `ws://127.0.0.1:PORT` of the proxy. */
  readonly url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Resets every open connection (both sides). */
  drop(): void;
  /** Resets every open connection and refuses new ones for `ms` (an outage). */
  cutFor(ms: number): void;
  /** Destroys every open connection and stops listening. */
  close(): Promise<void>;
}

export async function startDroppingProxy(upstreamUrl: string): Promise<DroppingProxy> {
  const upstream = new URL(upstreamUrl);
  const sockets = new Set<Socket>();
  let connections = 0;
  let downUntil = 0;
  const server = createServer((downstream) => {
    if (Date.now() < downUntil) {
      downstream.on('error', () => undefined);
      downstream.resetAndDestroy();
      return;
    }
    connections += 1;
    const up = connect(Number(upstream.port), upstream.hostname);
    for (const socket of [downstream, up]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    downstream.pipe(up).pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return connections;
    },
    drop: () => {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    cutFor: (ms: number) => {
      downUntil = Date.now() + ms;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
