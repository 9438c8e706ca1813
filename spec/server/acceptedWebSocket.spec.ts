/**
 * The executor's own writing side of accepted WebSockets (acceptedWebSocket.ts): frames of
 * every length class reach a standard client intact, messages of one turn leave in one socket
 * write, split texts arrive joined, a close flushes first, and a peer that stops reading makes
 * the transport report a backlog — which pauses process output end to end without losing or
 * reordering a byte.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import WebSocket, { WebSocketServer } from 'ws';
import { acceptedWebSocket } from '../../src/server/acceptedWebSocket.js';
import type { BackpressureTransport } from '../../src/server/backpressure.js';
import type { SplitTextTransport } from '../../src/server/splitText.js';
import { startExecServer, type ExecServer } from '../../src/server/index.js';
import { RawClient } from './rawClient.js';

type ServerTransport = SplitTextTransport & BackpressureTransport;

interface Pair {
  transport: ServerTransport;
  raw: Duplex;
  client: WebSocket;
  received: string[];
}

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real loopback WebSocket: our transport on the accepting side, `ws` as the client. */
async function pair(): Promise<Pair> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const server: Server = createServer();
  const accepted = new Promise<{ transport: ServerTransport; raw: Duplex }>((resolve) =>
    server.on('upgrade', (request, socket: Duplex, head: Buffer) =>
      wss.handleUpgrade(request, socket, head, (ws) =>
        resolve({ transport: acceptedWebSocket(ws, socket) as ServerTransport, raw: socket }),
      ),
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
  client.on('error', () => undefined);
  const received: string[] = [];
  client.on('message', (data, isBinary) => {
    expect(isBinary).toBe(false);
    received.push((data as Buffer).toString('utf8'));
  });
  const { transport, raw } = await accepted;
  await new Promise((resolve) =>
    client.readyState === WebSocket.OPEN ? resolve(undefined) : client.once('open', resolve),
  );
  cleanups.push(async () => {
    client.terminate();
    transport.close();
    wss.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { transport, raw, client, received };
}

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('acceptedWebSocket (outbound frames)', () => {
  it('delivers messages of every frame length class, multi-byte text included', async () => {
    const { transport, received } = await pair();
    const texts = [
      '',
      'a'.repeat(125),
      'b'.repeat(126),
      'c'.repeat(65_535),
      'd'.repeat(65_536),
      'é'.repeat(70_000), // 140,000 bytes: the 64-bit length form
      '{"x":"ünïcødé ✓ 𝄞"}',
      'e'.repeat(300_000), // bigger than one reusable output buffer
    ];
    for (const text of texts) transport.send(text);
    await until(() => received.length === texts.length, 'all messages');
    expect(received).toEqual(texts);
  });

  it('writes the output of one turn, and what follows it, with one socket write, in order', async () => {
    const { transport, raw, received } = await pair();
    const write = jest.spyOn(raw, 'write');
    for (let index = 0; index < 8; index += 1) {
      transport.sendSplit({ head: '{"n":', ascii: String(index), tail: '}' });
    }
    transport.send('{"after":true}');
    expect(write).not.toHaveBeenCalled();
    await Promise.resolve();
    expect(write).toHaveBeenCalledTimes(1);
    await until(() => received.length === 9, 'nine messages');
    expect(received).toEqual([
      ...[0, 1, 2, 3, 4, 5, 6, 7].map((n) => `{"n":${n}}`),
      '{"after":true}',
    ]);
  });

  it('writes a lone message at once', async () => {
    const { transport, raw, received } = await pair();
    const write = jest.spyOn(raw, 'write');
    transport.send('{"id":1,"result":{}}');
    expect(write).toHaveBeenCalledTimes(1);
    await until(() => received.length === 1, 'the reply');
    expect(received).toEqual(['{"id":1,"result":{}}']);
  });

  it('sends a split text as the joined text', async () => {
    const { transport, received } = await pair();
    transport.sendSplit({ head: '{"chunk":"', ascii: 'QUJD'.repeat(3000), tail: '","ü":1}' });
    await until(() => received.length === 1, 'the message');
    expect(received[0]).toBe(`{"chunk":"${'QUJD'.repeat(3000)}","ü":1}`);
  });

  it('flushes pending messages before its close frame', async () => {
    const { transport, client, received } = await pair();
    const closed = new Promise<number>((resolve) => client.once('close', resolve));
    transport.send('{"last":true}');
    transport.close();
    expect(await closed).toBe(1000);
    expect(received).toEqual(['{"last":true}']);
  });

  it('reports a backlog while the peer does not read, and when it has drained', async () => {
    const { transport, client, received } = await pair();
    (client as unknown as { _socket: Duplex })._socket.pause();
    const chunk = 'x'.repeat(64 * 1024);
    for (let turn = 0; turn < 400 && !transport.backedUp; turn += 1) {
      transport.send(chunk);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(transport.backedUp).toBe(true);
    const sent = received.length;
    const drained = new Promise<void>((resolve) => transport.onceDrained(resolve));
    (client as unknown as { _socket: Duplex })._socket.resume();
    await drained;
    expect(transport.backedUp).toBe(false);
    await until(() => received.length > sent, 'the backlog');
  });
});

describe('acceptedWebSocket (inbound)', () => {
  it('delivers texts (Text and UTF-8 Binary) in order, then completes on a clean close', async () => {
    const { transport, client } = await pair();
    const texts: string[] = [];
    let completed = false;
    transport.incoming$.subscribe({
      next: (text) => texts.push(text),
      complete: () => (completed = true),
    });
    client.send('{"a":1}');
    client.send(Buffer.from('{"ü":2}'), { binary: true });
    await until(() => texts.length === 2, 'two texts');
    client.close(1000);
    await until(() => completed, 'completion');
    expect(texts).toEqual(['{"a":1}', '{"ü":2}']);
    let late = false;
    transport.incoming$.subscribe({ complete: () => (late = true) });
    expect(late).toBe(true);
  });

  it('errors on a Binary message that is not UTF-8', async () => {
    const { transport, client } = await pair();
    const failure = new Promise<Error>((resolve) =>
      transport.incoming$.subscribe({ error: (error: Error) => resolve(error) }),
    );
    client.send(Buffer.from([0xff, 0xfe]), { binary: true });
    expect((await failure).message).toMatch(/not valid UTF-8/);
  });
});

describe('process output backpressure (executor end to end)', () => {
  const servers: ExecServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('stops reading a child while the client does not read, losing and reordering nothing', async () => {
    const server = await startExecServer();
    servers.push(server);
    const client = await RawClient.connect(server.url);
    await client.handshake();
    const socket = (client as unknown as { socket: { _socket: Duplex } }).socket._socket;
    await client.call('process/start', {
      processId: 'flood',
      argv: ['sh', '-c', 'sleep 0.2; exec cat /dev/zero'],
      cwd: 'file:///',
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
      arg0: null,
    });
    socket.pause();
    const before = process.memoryUsage().arrayBuffers;
    await new Promise((resolve) => setTimeout(resolve, 700));
    // Unpaced, the executor would have queued hundreds of MiB by now.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(48 * 1024 * 1024);
    socket.resume();
    await until(
      () => client.notifications('process/output', 'flood').length >= 2048,
      '16 MiB of output',
      10_000,
    );
    await client.call('process/terminate', { processId: 'flood' });
    await client.waitClosedNotification('flood', 10_000);
    const seqs = client.processEvents('flood').map((event) => event.params?.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    for (const output of client.notifications('process/output', 'flood')) {
      expect(Buffer.from(String(output.params?.chunk), 'base64').every((byte) => byte === 0)).toBe(
        true,
      );
    }
  }, 30_000);
});
