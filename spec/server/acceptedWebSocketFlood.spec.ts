/**
 * A peer that writes and never reads must not grow the executor's memory (issue #14, "Ping
 * flood"): the accepted WebSocket keeps one Pong waiting, however many Pings arrive, and stops
 * reading the peer while its unsent replies exceed INBOUND_PAUSE_BYTES, losing none of them.
 * The peer here is a raw TCP socket, so nothing on its side reads behind the test's back.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { acceptedWebSocket, INBOUND_PAUSE_BYTES } from '../../src/server/acceptedWebSocket.js';
import { switchingProtocols } from '../../src/server/webSocketUpgrade.js';
import type { Transport } from '../../src/transport/transport.js';
import { clientFrame, Opcode } from '../support/clientFrames.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface RawPair {
  transport: Transport;
  /** The executor's end of the TCP connection. */
  serverSocket: Socket;
  /** The peer's end, paused (not reading) once the handshake is done. */
  peer: Socket;
}

async function rawPair(): Promise<RawPair> {
  const server: Server = createServer();
  const accepted = new Promise<{ transport: Transport; serverSocket: Socket }>((resolve) =>
    server.on('upgrade', (request, socket: Socket, head: Buffer) => {
      socket.write(switchingProtocols(String(request.headers['sec-websocket-key'])));
      resolve({ transport: acceptedWebSocket(socket, head), serverSocket: socket });
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const peer = connect((server.address() as AddressInfo).port, '127.0.0.1');
  peer.on('error', () => undefined);
  await new Promise((resolve) => peer.once('connect', resolve));
  peer.write(
    'GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  let head = '';
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      peer.off('data', onData);
      peer.pause();
      resolve();
    };
    peer.on('data', onData);
  });
  const { transport, serverSocket } = await accepted;
  cleanups.push(async () => {
    peer.destroy();
    serverSocket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { transport, serverSocket, peer };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** The unmasked server frames in `bytes` as [opcode, payload]; the rest is left in `rest`. */
function parseFrames(bytes: Buffer): { frames: Array<[number, Buffer]>; rest: Buffer } {
  const frames: Array<[number, Buffer]> = [];
  let offset = 0;
  for (;;) {
    if (bytes.length - offset < 2) break;
    let length = (bytes[offset + 1] as number) & 0x7f;
    let header = 2;
    if (length === 126) {
      if (bytes.length - offset < 4) break;
      length = bytes.readUInt16BE(offset + 2);
      header = 4;
    } else if (length === 127) {
      if (bytes.length - offset < 10) break;
      length = Number(bytes.readBigUInt64BE(offset + 2));
      header = 10;
    }
    if (bytes.length - offset < header + length) break;
    frames.push([
      (bytes[offset] as number) & 0x0f,
      bytes.subarray(offset + header, offset + header + length),
    ]);
    offset += header + length;
  }
  return { frames, rest: bytes.subarray(offset) };
}

/** Reads the peer's frames from now on; `frames` grows as they arrive. */
function readFrames(peer: Socket): Array<[number, Buffer]> {
  const frames: Array<[number, Buffer]> = [];
  let rest = Buffer.alloc(0);
  peer.on('data', (chunk: Buffer) => {
    const parsed = parseFrames(Buffer.concat([rest, chunk]));
    frames.push(...parsed.frames);
    rest = Buffer.from(parsed.rest);
  });
  peer.resume();
  return frames;
}

async function until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('acceptedWebSocket under a peer that does not read', () => {
  it('keeps one Pong waiting however many Pings arrive, and answers the latest', async () => {
    const { transport, serverSocket, peer } = await rawPair();
    transport.incoming$.subscribe({ error: () => undefined });
    const ping = clientFrame(Opcode.ping, Buffer.alloc(125, 0x2e));
    const batch = Buffer.concat(Array.from({ length: 1000 }, () => ping));
    const floodBytes = 32 * 1024 * 1024; // 31 MiB of Pongs if each were answered
    let sent = 0;
    let maxUnsent = 0;
    const deadline = Date.now() + 60_000;
    while (sent < floodBytes && Date.now() < deadline) {
      if (!peer.write(batch)) await new Promise((resolve) => peer.once('drain', resolve));
      sent += batch.length;
      await turn();
      maxUnsent = Math.max(maxUnsent, serverSocket.writableLength);
    }
    expect(sent).toBeGreaterThanOrEqual(floodBytes);
    peer.write(clientFrame(Opcode.ping, 'the last ping'));
    await until(
      () => serverSocket.writableLength > 0 || peer.writableLength === 0,
      'the last ping',
    );
    // Answered at once up to the 512 KiB backlog limit, then only the latest Pong waits.
    expect(maxUnsent).toBeLessThan(1024 * 1024);
    const frames = readFrames(peer);
    await until(
      () => frames.some(([, payload]) => payload.toString() === 'the last ping'),
      'the Pong of the last Ping',
    );
    expect(frames.every(([opcode]) => opcode === Opcode.pong)).toBe(true);
    expect(frames.length).toBeLessThan(sent / ping.length);
  }, 120_000);

  it('stops reading a peer that does not read its replies, and loses none of them', async () => {
    const { transport, serverSocket, peer } = await rawPair();
    const reply = JSON.stringify({ id: 1, result: { text: 'r'.repeat(180) } });
    let received = 0;
    transport.incoming$.subscribe({
      next: () => {
        received += 1;
        transport.send(reply);
      },
      error: () => undefined,
    });
    const request = clientFrame(Opcode.text, '{"id":1,"method":"x"}');
    const perBatch = 1000;
    const batch = Buffer.concat(Array.from({ length: perBatch }, () => request));
    let sentMessages = 0;
    let maxUnsent = 0;
    let peerBlocked = false;
    const deadline = Date.now() + 60_000;
    // Replies are ~9x the requests: 8 MiB of requests would be ~75 MiB of replies held.
    while (sentMessages * request.length < 8 * 1024 * 1024 && Date.now() < deadline) {
      sentMessages += perBatch;
      if (!peer.write(batch)) {
        const drained = await Promise.race([
          new Promise((resolve) => peer.once('drain', () => resolve(true))),
          new Promise((resolve) => setTimeout(() => resolve(false), 1_000)),
        ]);
        if (!drained) {
          peerBlocked = true;
          break;
        }
      }
      await turn();
      maxUnsent = Math.max(maxUnsent, serverSocket.writableLength);
      if (maxUnsent > 4 * INBOUND_PAUSE_BYTES) break;
    }
    // One read's worth of requests (64 KiB) may still be answered after the pause.
    expect(maxUnsent).toBeLessThan(INBOUND_PAUSE_BYTES + 1024 * 1024);
    expect(peerBlocked).toBe(true);
    expect(received).toBeLessThan(sentMessages);
    const frames = readFrames(peer);
    await until(() => frames.length === sentMessages, `${sentMessages} replies`, 60_000);
    expect(received).toBe(sentMessages);
    expect(frames.every(([, payload]) => payload.toString() === reply)).toBe(true);
  }, 120_000);
});
