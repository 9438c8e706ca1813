import { createServer, type AddressInfo } from 'node:net';

/**
 * A loopback port that was free a moment ago, for a server that must be told its port up front
 * (one that can listen on port 0 should). Another process may take it in between.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
