/**
 * The forwarding executor's limits and failures: early messages are bounded while the
 * destination's handshake is pending, and an unreachable destination ends the connection.
 * (The relayed happy path runs end to end in spec/cli/serveForward.spec.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  MAX_EARLY_MESSAGES,
  createForwardingExecutor,
} from '../../src/server/forwardingExecutor.js';
import { createTransportPair } from '../support/transportPair.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import type { RunningExecServer } from '../support/codexExecServer.js';

const within = <T>(promise: Promise<T>, ms = 15_000): Promise<T> =>
  Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms)),
  ]);

describe('createForwardingExecutor', () => {
  let silent: Server;
  const sockets = new Set<Socket>();
  let silentUrl: string;
  let destination: RunningExecServer;

  beforeAll(async () => {
    // Accepts TCP connections and never answers the WebSocket handshake.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `ws://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    destination = await startTsExecServer();
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    await destination.stop();
  });

  it('relays requests and replies both ways', async () => {
    const executor = createForwardingExecutor(destination.url);
    const { client, server } = createTransportPair();
    executor.serveTransport(server, 'spec');
    client.send(JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'spec' } }));
    await within(
      new Promise<void>((resolve) => {
        const subscription = client.incoming$.subscribe((text) => {
          if ((JSON.parse(text) as { id?: number }).id === 1) {
            subscription.unsubscribe();
            resolve();
          }
        });
      }),
    );
    await executor.shutdown();
    expect(client.isClosed).toBe(true);
  });

  it(`ends a connection that sends more than ${MAX_EARLY_MESSAGES} messages before the destination answers`, async () => {
    const executor = createForwardingExecutor(silentUrl);
    const { client, server } = createTransportPair();
    const connection = executor.serveTransport(server, 'spec');
    for (let index = 0; index < MAX_EARLY_MESSAGES; index += 1) client.send('{}');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(client.isClosed).toBe(false);
    client.send('{}');
    await within(connection.done);
    expect(client.isClosed).toBe(true);
  });

  it('ends the connection when the destination cannot be reached', async () => {
    const executor = createForwardingExecutor('ws://127.0.0.1:1');
    const { client, server } = createTransportPair();
    const connection = executor.serveTransport(server, 'spec');
    await within(connection.done);
    expect(client.isClosed).toBe(true);
  });
});
