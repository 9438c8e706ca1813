/**
 * Test helper: a loopback HTTP CONNECT proxy that records each CONNECT (target and
 * Proxy-Authorization) and tunnels it, or answers every CONNECT with `refuse` when given.
 */
import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface ConnectProxy {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly connects: Array<{ target: string; auth?: string }>;
  /** Destroys the tunnels and stops listening. */
  close(): Promise<void>;
}

export async function startConnectProxy(refuse?: number): Promise<ConnectProxy> {
  const connects: Array<{ target: string; auth?: string }> = [];
  const server = createServer();
  const tunnels: Socket[] = [];
  server.on('connect', (request, client: Socket) => {
    connects.push({ target: request.url ?? '', auth: request.headers['proxy-authorization'] });
    if (refuse !== undefined) {
      client.end(`HTTP/1.1 ${refuse} Refused\r\n\r\n`);
      return;
    }
    const [host, port] = [
      request.url!.slice(0, request.url!.lastIndexOf(':')),
      request.url!.slice(request.url!.lastIndexOf(':') + 1),
    ];
    const upstream = connect(Number(port), host!.replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    tunnels.push(upstream, client);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connects,
    close: () => {
      // The tunnels first: the server's close waits for these detached sockets.
      tunnels.forEach((socket) => socket.destroy());
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}
