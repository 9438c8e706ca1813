/**
 * The executor's accepted WebSockets (acceptedWebSocket.ts) against a standard client (`ws`):
 * outbound, frames of every length class arrive intact, messages of one turn leave in one
 * socket write, split texts arrive joined, a close flushes first, and a peer that stops
 * reading makes the transport report a backlog — which pauses process output end to end
 * without losing or reordering a byte; inbound, texts arrive in order, Pings are answered,
 * and the ends of a connection are told apart.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import WebSocket from 'ws';
import { acceptedWebSocket } from '../../src/server/acceptedWebSocket.js';
import type { UndecodableMessageTransport } from '../../src/server/undecodableMessage.js';
import { switchingProtocols } from '../../src/server/webSocketUpgrade.js';
import type { BackpressureTransport } from '../../src/server/backpressure.js';
import type { SplitTextTransport } from '../../src/server/splitText.js';
import { startExecServer, type ExecServer } from '../../src/server/index.js';
import { RawClient } from './rawClient.js';
import { FLOOD_PROCESS_START_PARAMS } from '../support/floodProcess.js';

type ServerTransport = SplitTextTransport & BackpressureTransport & UndecodableMessageTransport;

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
  const server: Server = createServer();
  const accepted = new Promise<{ transport: ServerTransport; raw: Duplex }>((resolve) =>
    server.on('upgrade', (request, socket: Socket, head: Buffer) => {
      socket.write(switchingProtocols(String(request.headers['sec-websocket-key'])));
      resolve({ transport: acceptedWebSocket(socket, head), raw: socket });
    }),
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

  it('flushes pending messages, then closes the connection without a Close frame (as the binary)', async () => {
    const { transport, client, received } = await pair();
    const closed = new Promise<number>((resolve) => client.once('close', resolve));
    transport.send('{"last":true}');
    transport.close();
    expect(await closed).toBe(1006); // `ws` reports a connection that ended without a Close frame
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

  it('reports a Binary message that is not UTF-8 by its JSON error, in order, and stays open', async () => {
    const { transport, client } = await pair();
    const inbound: string[] = [];
    transport.incoming$.subscribe((text) => inbound.push(`text ${text}`));
    transport.onUndecodable((detail) => inbound.push(`undecodable ${detail}`));
    client.send('{"a":1}');
    client.send(Buffer.from('{"id":7,"method":"a\xff"}', 'latin1'), { binary: true });
    client.send(Buffer.from([0x7b, 0xff, 0x7d]), { binary: true });
    // Bad bytes after a complete value are trailing characters, as any other text there.
    client.send(Buffer.from('{"b":2}\xff', 'latin1'), { binary: true });
    client.send('{"c":3}');
    await until(() => inbound.length === 5, 'five messages');
    expect(inbound).toEqual([
      'text {"a":1}',
      'undecodable invalid unicode code point at line 1 column 21',
      'undecodable key must be a string at line 1 column 2',
      'undecodable trailing characters at line 1 column 8',
      'text {"c":3}',
    ]);
    expect(client.readyState).toBe(WebSocket.OPEN);
  });

  it('answers a Ping with a Pong carrying its payload', async () => {
    const { transport, client } = await pair();
    transport.incoming$.subscribe();
    const pong = new Promise<Buffer>((resolve) => client.once('pong', resolve));
    client.ping(Buffer.from('are you there'));
    expect((await pong).toString()).toBe('are you there');
  });

  it('sends a keepalive Ping at its interval', async () => {
    const server: Server = createServer();
    server.on('upgrade', (request, socket: Socket, head: Buffer) => {
      socket.write(switchingProtocols(String(request.headers['sec-websocket-key'])));
      const transport = acceptedWebSocket(socket, head, { keepaliveIntervalMs: 20 });
      cleanups.push(() => transport.close());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    cleanups.push(() => client.terminate());
    const ping = await new Promise<Buffer>((resolve) => client.once('ping', resolve));
    expect(ping.length).toBe(0);
  });

  it('errors, and hangs up, when the peer breaks the protocol', async () => {
    const { transport, client } = await pair();
    const failure = new Promise<Error>((resolve) =>
      transport.incoming$.subscribe({ error: (error: Error) => resolve(error) }),
    );
    const closed = new Promise<number>((resolve) => client.once('close', resolve));
    // A Text frame that is not UTF-8: tungstenite refuses it, so does the reader.
    client.send(Buffer.from([0xff, 0xfe]), { binary: false });
    expect((await failure).message).toMatch(
      /broke the WebSocket protocol: a Text message is not valid UTF-8/,
    );
    expect(await closed).toBe(1006);
  });

  it('errors when the connection ends without a Close frame', async () => {
    const { transport, client } = await pair();
    const failure = new Promise<Error>((resolve) =>
      transport.incoming$.subscribe({ error: (error: Error) => resolve(error) }),
    );
    client.terminate();
    expect((await failure).message).toMatch(/exec-server transport disconnected/);
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
    await client.call('process/start', FLOOD_PROCESS_START_PARAMS);
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
