/**
 * The harness transport against a scripted relay: every frame the harness sends is checked,
 * and the relay can answer with anything (good, late, out of order, hostile).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { firstValueFrom, lastValueFrom, Subscription, toArray } from 'rxjs';
import WebSocket, { WebSocketServer } from 'ws';
import {
  HYBRID_IK_MESSAGE1_OVERHEAD,
  NoiseChannelIdentity,
  NoiseHandshakeError,
  prologue,
  responderHandshake,
  type NoiseChannel,
} from '../../src/noise/index.js';
import { ConnectError, DisconnectedError, TimeoutError } from '../../src/protocol/errors.js';
import {
  dataFrame,
  decodeRelayFrame,
  encodeRelayFrame,
  handshakeFrame,
  PongTimeoutError,
  RelayDataReceiver,
  RelayDataSender,
  RelayProtocolError,
  resetFrame,
  type RelayFrame,
} from '../../src/relay/index.js';
import type { NoiseRendezvousConnectBundle } from '../../src/registry/index.js';
import {
  NoiseRelayHandshakeDisconnectedError,
  NoiseRelayHarnessProtocolError,
  NoiseRelayStreamResetError,
} from '../../src/transport/noiseHarnessErrors.js';
import {
  connectNoiseHarness,
  type NoiseHarnessOptions,
} from '../../src/transport/noiseHarnessTransport.js';
import type { Transport } from '../../src/transport/transport.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const executorIdentity = NoiseChannelIdentity.generate();
const harnessIdentity = NoiseChannelIdentity.generate();
const AUTHORIZATION = 'scripted-authorization';

/** One accepted harness socket, driven by the test. */
class RelayPeer {
  private readonly frames: RelayFrame[] = [];
  private readonly waiters: Array<(frame: RelayFrame) => void> = [];
  readonly closed: Promise<number>;
  streamId = '';
  pings = 0;
  /** With a relay started `autoPong: false`, Pings are answered by hand while this is true. */
  answerPings = true;

  constructor(
    readonly socket: WebSocket,
    manualPongs = false,
  ) {
    socket.on('ping', () => {
      this.pings++;
      if (manualPongs && this.answerPings) socket.pong();
    });
    this.closed = new Promise((resolve) => socket.once('close', (code) => resolve(code)));
    socket.on('message', (data: Buffer) => {
      const frame = decodeRelayFrame(data);
      const waiter = this.waiters.shift();
      if (waiter) waiter(frame);
      else this.frames.push(frame);
    });
  }

  nextFrame(): Promise<RelayFrame> {
    const frame = this.frames.shift();
    if (frame) return Promise.resolve(frame);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  send(frame: RelayFrame): void {
    this.socket.send(encodeRelayFrame(frame));
  }

  /** Reads resume + handshake and returns message 1 (checking the opening frames). */
  async readOpening(): Promise<Uint8Array> {
    const resume = await this.nextFrame();
    expect(resume).toMatchObject({ kind: 'resume', nextSeq: 0 });
    this.streamId = resume.streamId;
    const handshake = await this.nextFrame();
    if (handshake.kind !== 'handshake')
      throw new Error(`expected handshake, got ${handshake.kind}`);
    expect(handshake.streamId).toBe(this.streamId);
    return handshake.payload;
  }

  /** Completes the handshake as the executor and returns both directions' helpers. */
  async accept(): Promise<{
    sender: RelayDataSender;
    receiver: RelayDataReceiver;
    channel: NoiseChannel;
  }> {
    const message1 = await this.readOpening();
    const request = responderHandshake({
      identity: executorIdentity,
      prologue: prologue({
        environmentId: 'env',
        executorRegistrationId: 'reg',
        streamId: this.streamId,
      }),
      message1,
    });
    expect(request.authorization).toBe(AUTHORIZATION);
    expect(request.initiatorPublicKey.toJSON()).toEqual(harnessIdentity.toJSON());
    const { message2, channel } = request.accept();
    this.send(handshakeFrame(this.streamId, message2));
    return {
      sender: new RelayDataSender(this.streamId, channel.send),
      receiver: new RelayDataReceiver(channel.receive),
      channel,
    };
  }
}

async function startRelay(options: { autoPong?: boolean } = {}) {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    autoPong: options.autoPong ?? true,
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const peers: RelayPeer[] = [];
  const waiters: Array<(peer: RelayPeer) => void> = [];
  wss.on('connection', (socket) => {
    const peer = new RelayPeer(socket, options.autoPong === false);
    const waiter = waiters.shift();
    if (waiter) waiter(peer);
    else peers.push(peer);
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  );
  const { port } = wss.address() as AddressInfo;
  const url = `ws://127.0.0.1:${port}/ws?role=harness&sig=secret`;
  return {
    url,
    bundle: (): NoiseRendezvousConnectBundle => ({
      websocketUrl: url,
      environmentId: 'env',
      executorRegistrationId: 'reg',
      executorPublicKey: executorIdentity.toJSON(),
      harnessKeyAuthorization: AUTHORIZATION,
    }),
    nextPeer: (): Promise<RelayPeer> => {
      const peer = peers.shift();
      return peer ? Promise.resolve(peer) : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

/** Starts a harness; resolves the transport or the error it ended with. */
function harness(bundle: NoiseRendezvousConnectBundle, options: NoiseHarnessOptions = {}) {
  const result = new Promise<Transport | Error>((resolve) => {
    const subscription = connectNoiseHarness(bundle, harnessIdentity, options).subscribe({
      next: (transport) => {
        cleanups.push(() => transport.close());
        resolve(transport);
      },
      error: (error: Error) => resolve(error),
    });
    cleanups.push(() => subscription.unsubscribe());
  });
  return result;
}

async function ready(result: Promise<Transport | Error>): Promise<Transport> {
  const value = await result;
  if (value instanceof Error) throw value;
  return value;
}

describe('connectNoiseHarness handshake phase (scripted relay)', () => {
  it('opens with resume{0} then handshake{msg1} on a fresh lowercase UUIDv4 stream id', async () => {
    const relay = await startRelay();
    const connecting = harness(relay.bundle());
    const peer = await relay.nextPeer();
    const message1 = await peer.readOpening();
    expect(peer.streamId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(message1.length).toBe(HYBRID_IK_MESSAGE1_OVERHEAD + AUTHORIZATION.length);
    peer.socket.terminate();
    expect(await connecting).toBeInstanceOf(NoiseRelayHandshakeDisconnectedError);
  });

  it('ignores other streams and resume/ack/heartbeat frames while waiting, then becomes ready', async () => {
    const relay = await startRelay();
    const connecting = harness(relay.bundle());
    const peer = await relay.nextPeer();
    const message1 = await peer.readOpening();
    peer.send(resetFrame('someone-else'));
    peer.send(dataFrame('someone-else', 0, new Uint8Array(20)));
    peer.send({ kind: 'heartbeat', streamId: peer.streamId });
    peer.send({ kind: 'ack', streamId: peer.streamId });
    peer.send({ kind: 'resume', streamId: peer.streamId, nextSeq: 0 });
    const request = responderHandshake({
      identity: executorIdentity,
      prologue: prologue({
        environmentId: 'env',
        executorRegistrationId: 'reg',
        streamId: peer.streamId,
      }),
      message1,
    });
    peer.send(handshakeFrame(peer.streamId, request.accept().message2));
    expect(await connecting).toHaveProperty('incoming$');
  });

  it.each([
    [
      'a reset',
      (peer: RelayPeer) => peer.send(resetFrame(peer.streamId)),
      NoiseRelayStreamResetError,
      'Noise relay stream reset',
    ],
    [
      'data',
      (peer: RelayPeer) => peer.send(dataFrame(peer.streamId, 0, new Uint8Array(32))),
      NoiseRelayHarnessProtocolError,
      'exec-server protocol error: Noise relay received data before handshake completion',
    ],
    [
      'a text frame',
      (peer: RelayPeer) => peer.socket.send('{"id":1}'),
      NoiseRelayHarnessProtocolError,
      'exec-server protocol error: Noise relay expects binary protobuf frames',
    ],
    [
      'an undecodable frame',
      (peer: RelayPeer) => peer.socket.send(Uint8Array.from([0xff, 0xff])),
      NoiseRelayHarnessProtocolError,
      'exec-server protocol error: Noise relay received data before handshake completion',
    ],
    [
      'a close frame',
      (peer: RelayPeer) => peer.socket.close(4000, 'bye'),
      NoiseRelayHandshakeDisconnectedError,
      'Noise relay received close frame during handshake (code 4000, bye)',
    ],
  ] as const)('fails on %s before the handshake completes', async (_what, act, type, message) => {
    const relay = await startRelay();
    const connecting = harness(relay.bundle());
    const peer = await relay.nextPeer();
    await peer.readOpening();
    act(peer);
    const error = await connecting;
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).toBe(message);
  });

  it('rejects a message 2 that does not authenticate with a NoiseHandshakeError', async () => {
    const relay = await startRelay();
    const connecting = harness(relay.bundle());
    const peer = await relay.nextPeer();
    await peer.readOpening();
    peer.send(handshakeFrame(peer.streamId, new Uint8Array(3424).fill(9)));
    const error = await connecting;
    expect(error).toBeInstanceOf(NoiseHandshakeError);
    expect((await peer.closed) > 0).toBe(true);
  });

  it('refuses an authorization over 4096 bytes before sending anything', async () => {
    const relay = await startRelay();
    const error = await harness({ ...relay.bundle(), harnessKeyAuthorization: 'a'.repeat(4097) });
    expect(error).toBeInstanceOf(DisconnectedError);
    expect((error as Error).message).toMatch(
      /^failed to start Noise relay handshake: Noise channel handshake failed: handshake payload is too large/,
    );
  });

  it('times out a handshake the relay never answers, and closes the socket', async () => {
    const relay = await startRelay();
    const connecting = harness(relay.bundle(), { handshakeTimeoutMs: 150 });
    const peer = await relay.nextPeer();
    const error = await connecting;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toBe(
      'timed out waiting for the Noise relay handshake after 150ms',
    );
    await peer.closed;
  });

  it('times out a WebSocket upgrade that never completes', async () => {
    const server: Server = createServer();
    const sockets: Socket[] = [];
    server.on('upgrade', (_request, socket: Socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const { port } = server.address() as AddressInfo;
    const bundle = {
      ...(await startRelay()).bundle(),
      websocketUrl: `ws://127.0.0.1:${port}/?sig=secret`,
    };
    const error = await harness(bundle, { connectTimeoutMs: 100 });
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toBe(
      `timed out connecting to Noise relay websocket \`ws://127.0.0.1:${port}/\` after 100ms`,
    );
  });

  it('reports refused connections and HTTP rejections as ConnectError without the query string', async () => {
    const server: Server = createServer((_request, response) => response.writeHead(401).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const base = (await startRelay()).bundle();
    const rejected = await harness({ ...base, websocketUrl: `ws://127.0.0.1:${port}/?sig=secret` });
    expect(rejected).toBeInstanceOf(ConnectError);
    expect((rejected as Error).message).toContain('HTTP 401');
    expect((rejected as Error).message).not.toContain('secret');
    const refused = await harness({ ...base, websocketUrl: 'ws://127.0.0.1:1/?sig=secret' });
    expect(refused).toBeInstanceOf(ConnectError);
  });

  it('closes the socket when unsubscribed before the handshake completes', async () => {
    const relay = await startRelay();
    const subscription: Subscription = connectNoiseHarness(
      relay.bundle(),
      harnessIdentity,
    ).subscribe({
      error: () => undefined,
    });
    const peer = await relay.nextPeer();
    await peer.readOpening();
    subscription.unsubscribe();
    expect(await peer.closed).toBeGreaterThan(0);
  });
});

describe('connectNoiseHarness transport phase (scripted relay)', () => {
  async function established(
    options: NoiseHarnessOptions = {},
    relayOptions: { autoPong?: boolean } = {},
  ) {
    const relay = await startRelay(relayOptions);
    const connecting = harness(relay.bundle(), options);
    const peer = await relay.nextPeer();
    const executor = await peer.accept();
    const transport = await ready(connecting);
    return { peer, transport, ...executor };
  }

  it('encrypts each message into ≤ 61440-byte records with seq from 0, method names hidden', async () => {
    const { peer, transport, receiver } = await established();
    const big = JSON.stringify({
      id: 7,
      method: 'fs/writeFile',
      params: { data: 'A'.repeat(150_000) },
    });
    transport.send(big);
    const frames: RelayFrame[] = [];
    for (let i = 0; i < 3; i++) frames.push(await peer.nextFrame());
    expect(frames.map((f) => (f.kind === 'data' ? f.seq : -1))).toEqual([0, 1, 2]);
    const texts: string[] = [];
    for (const frame of frames) {
      if (frame.kind !== 'data') throw new Error('expected data');
      expect(frame.payload.length).toBeLessThanOrEqual(61440 + 16);
      expect(Buffer.from(frame.payload).includes('fs/writeFile')).toBe(false);
      texts.push(...receiver.receive(frame).map((b) => new TextDecoder().decode(b)));
    }
    expect(texts).toEqual([big]);
  });

  it('copies the trace context of a request onto its first data frame only', async () => {
    const { peer, transport } = await established();
    const trace = {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'x=1',
    };
    transport.send(
      JSON.stringify({
        id: 1,
        method: 'process/start',
        params: { pad: 'p'.repeat(70_000) },
        trace,
      }),
    );
    const first = await peer.nextFrame();
    const second = await peer.nextFrame();
    expect(first).toMatchObject(trace);
    expect(second).not.toHaveProperty('traceparent');
    transport.send(JSON.stringify({ id: 2, result: { trace } }));
    expect(await peer.nextFrame()).not.toHaveProperty('traceparent');
  });

  it('reorders inbound records and reassembles messages spanning records', async () => {
    const { peer, transport, sender } = await established();
    const received = firstValueFrom(transport.incoming$.pipe(toArray()));
    const big = JSON.stringify({
      method: 'process/output',
      params: { chunk: 'z'.repeat(130_000) },
    });
    const frames = [...sender.send(big), ...sender.send('{"id":1,"result":{}}')];
    expect(frames).toHaveLength(4);
    for (const frame of [frames[1]!, frames[0]!, frames[3]!, frames[2]!]) peer.send(frame);
    peer.socket.close(1000);
    expect(await received).toEqual([big, '{"id":1,"result":{}}']);
  });

  it.each([
    [
      'a reset',
      (peer: RelayPeer) => peer.send(resetFrame(peer.streamId)),
      NoiseRelayStreamResetError,
      'Noise relay stream reset',
    ],
    [
      'a second handshake',
      (peer: RelayPeer) => peer.send(handshakeFrame(peer.streamId, new Uint8Array(10))),
      NoiseRelayHarnessProtocolError,
      'exec-server protocol error: Noise relay received invalid post-handshake frame',
    ],
    [
      'an undecodable frame',
      (peer: RelayPeer) => peer.socket.send(Uint8Array.from([0x08])),
      NoiseRelayHarnessProtocolError,
      'exec-server protocol error: Noise relay received invalid post-handshake frame',
    ],
    [
      'a record that does not decrypt',
      (peer: RelayPeer) => peer.send(dataFrame(peer.streamId, 0, new Uint8Array(40))),
      RelayProtocolError,
      'exec-server protocol error: Noise relay decryption failed: Noise channel transport failed: Cipher error: Decrypt error',
    ],
    [
      'a record beyond the reorder window',
      (peer: RelayPeer) => peer.send(dataFrame(peer.streamId, 65, new Uint8Array(40))),
      RelayProtocolError,
      'exec-server protocol error: Noise relay ciphertext exceeds reorder window',
    ],
    [
      'a frame over 256 KiB',
      (peer: RelayPeer) => peer.socket.send(new Uint8Array(256 * 1024 + 1)),
      DisconnectedError,
      'exec-server transport disconnected: Max payload size exceeded',
    ],
  ] as const)('ends incoming$ on %s after the handshake', async (_what, act, type, message) => {
    const { peer, transport } = await established();
    const outcome = lastValueFrom(transport.incoming$).catch((error: unknown) => error);
    act(peer);
    const error = await outcome;
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).toBe(message);
    await peer.closed;
  });

  it('hands messages to incomingUtf8$ as their checked UTF-8 bytes, and ends it on invalid UTF-8', async () => {
    const { peer, transport, sender } = await established();
    const received: (string | Uint8Array)[] = [];
    const outcome = new Promise<unknown>((resolve) =>
      transport.incomingUtf8$!.subscribe({
        next: (message) => received.push(message),
        error: resolve,
      }),
    );
    const text = '{"id":1,"result":{"name":"é✓"}}';
    for (const frame of sender.send(text)) peer.send(frame);
    for (const frame of sender.send(Uint8Array.from([0x7b, 0xff, 0x7d]))) peer.send(frame);
    const error = await outcome;
    expect(received).toHaveLength(1);
    expect(received[0]).toBeInstanceOf(Uint8Array); // on Node: the bytes, not decoded
    expect(Buffer.from(received[0] as Uint8Array).toString()).toBe(text);
    expect(error).toBeInstanceOf(NoiseRelayHarnessProtocolError);
    expect((error as Error).message).toBe(
      'exec-server protocol error: Noise relay JSON-RPC message is not valid UTF-8',
    );
    await peer.closed;
  });

  it('ignores frames for other streams after the handshake', async () => {
    const { peer, transport, sender } = await established();
    const first = firstValueFrom(transport.incoming$);
    peer.send(resetFrame('another-stream'));
    peer.send(handshakeFrame('another-stream', new Uint8Array(3)));
    for (const frame of sender.send('{"id":1,"result":{}}')) peer.send(frame);
    expect(await first).toBe('{"id":1,"result":{}}');
  });

  it('completes incoming$ and closes the socket on close()', async () => {
    const { peer, transport } = await established();
    const done = lastValueFrom(transport.incoming$, { defaultValue: 'completed' });
    transport.close();
    expect(await done).toBe('completed');
    expect(await peer.closed).toBe(1000);
    transport.send('{"id":1}'); // a no-op after close
  });

  it('reads nothing while paused, even past the Pong timeout, and everything once resumed', async () => {
    const { peer, transport, sender } = await established({
      keepalive: { pingIntervalMs: 20, pongTimeoutMs: 80 },
    });
    const received: string[] = [];
    let failure: unknown;
    transport.incoming$.subscribe({
      next: (text) => received.push(text),
      error: (e) => (failure = e),
    });
    transport.setPaused!(true);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the pause takes effect
    for (const frame of sender.send('{"id":1,"result":{}}')) peer.send(frame);
    await new Promise((resolve) => setTimeout(resolve, 300)); // past the Pong timeout
    expect(received).toEqual([]);
    expect(failure).toBeUndefined();
    transport.setPaused!(false);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(received).toEqual(['{"id":1,"result":{}}']);
    expect(failure).toBeUndefined();
    transport.close();
  });

  it('stays up while Pongs come back, and fails with pong_timeout once they stop', async () => {
    const { peer, transport } = await established(
      { keepalive: { pingIntervalMs: 20, pongTimeoutMs: 80 } },
      { autoPong: false },
    );
    const outcome = lastValueFrom(transport.incoming$).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(peer.pings).toBeGreaterThanOrEqual(3);
    peer.answerPings = false;
    // Other traffic is not liveness: frames keep arriving, the deadline still passes.
    const traffic = setInterval(() => peer.send(resetFrame('another-stream')), 10);
    const started = Date.now();
    const error = await outcome;
    clearInterval(traffic);
    expect(error).toBeInstanceOf(PongTimeoutError);
    expect(error).toBeInstanceOf(DisconnectedError);
    expect(Date.now() - started).toBeLessThan(2000);
    await peer.closed;
  });
});
