import { afterEach, describe, expect, it } from '@jest/globals';
import { NEVER, Observable, of, Subject, take, throwError } from 'rxjs';
import { NoiseChannelIdentity } from '../../../src/noise/index.js';
import { encodeRelayFrame, dataFrame, resetFrame } from '../../../src/relay/index.js';
import type {
  HarnessKeyValidator,
  RelayDisconnectReason,
  RelayEnvironmentEvent,
} from '../../../src/server/relay/index.js';
import {
  startNoiseExecServer,
  type RunningNoiseExecServer,
} from '../../support/noiseExecServer.js';
import { RawRelayClient } from './rawRelayClient.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Harness {
  server: RunningNoiseExecServer;
  events: RelayEnvironmentEvent[];
  ended: RelayDisconnectReason[];
  socketEnded: Subject<RelayDisconnectReason>;
}

async function start(options: Parameters<typeof startNoiseExecServer>[0] = {}): Promise<Harness> {
  const events: RelayEnvironmentEvent[] = [];
  const ended: RelayDisconnectReason[] = [];
  const socketEnded = new Subject<RelayDisconnectReason>();
  const server = await startNoiseExecServer({
    ...options,
    onEvent: (event) => events.push(event),
    onSocketEnded: (reason) => {
      ended.push(reason);
      socketEnded.next(reason);
    },
  });
  cleanups.push(() => server.stop());
  return { server, events, ended, socketEnded };
}

async function open(server: RunningNoiseExecServer, options?: { autoPong?: boolean }) {
  const client = await RawRelayClient.open(server.target, options);
  cleanups.push(() => client.close());
  return client;
}

function nextEnd(harness: Harness): Promise<RelayDisconnectReason> {
  return new Promise((resolve) => harness.socketEnded.pipe(take(1)).subscribe(resolve));
}

/** Counts calls; each stream's validation answers when the test says so. */
class ScriptedValidator implements HarnessKeyValidator {
  readonly calls: string[] = [];
  private readonly answers = new Map<string, Subject<boolean>>();
  constructor(
    private readonly fallback: (streamId: string) => Observable<boolean> = () => of(true),
  ) {}

  hold(streamId: string): Subject<boolean> {
    const subject = new Subject<boolean>();
    this.answers.set(streamId, subject);
    return subject;
  }

  validateHarnessKey(_key: unknown, _authorization: string, streamId: string): Observable<boolean> {
    this.calls.push(streamId);
    return this.answers.get(streamId) ?? this.fallback(streamId);
  }
}

const counted = (events: RelayEnvironmentEvent[]) =>
  events.filter((e) => e.kind === 'handshake-refused' && e.counted).length;

describe('serveMultiplexedEnvironment', () => {
  it('runs many streams on one socket, each its own session', async () => {
    const { server } = await start();
    const client = await open(server);
    const streams = await Promise.all(Array.from({ length: 24 }, () => client.openStream()));
    const sessions = await Promise.all(streams.map((stream) => stream.initialize()));
    expect(new Set(sessions).size).toBe(24);
    const statuses = await Promise.all(streams.map((s) => s.request('environment/status')));
    for (const status of statuses) expect(status.result).toBeDefined();
  });

  it('a slow validation of one stream does not block another', async () => {
    const validator = new ScriptedValidator();
    const { server } = await start({ validator });
    const client = await open(server);
    const slow = client.handshake({ streamId: 'stream-slow' });
    const answer = validator.hold('stream-slow');
    const fast = await client.handshake({ streamId: 'stream-fast' }).reply;
    expect(fast).not.toBe('reset');
    if (fast === 'reset') return;
    expect(await fast.initialize()).toMatch(/\S/);
    expect(client.framesOn('stream-slow')).toEqual([]);
    answer.next(true);
    const admitted = await slow.reply;
    expect(admitted).not.toBe('reset');
  });

  it('resets a refused validation without sending any application data', async () => {
    const validator = new ScriptedValidator(() => of(false));
    const harness = await start({ validator });
    const client = await open(harness.server);
    const { streamId, reply } = client.handshake();
    expect(await reply).toBe('reset');
    expect(validator.calls).toEqual([streamId]);
    expect(client.framesOn(streamId).map((f) => f.kind)).toEqual(['reset']);
    expect(harness.events).toContainEqual(
      expect.objectContaining({
        kind: 'handshake-refused',
        reason: 'validation-failed',
        counted: true,
      }),
    );
  });

  it('treats a validator error, a throwing validator and a validation timeout as refusals', async () => {
    const validator = new ScriptedValidator((id) => {
      if (id === 'throws') throw new Error('validator bug');
      return id === 'errors' ? throwError(() => new Error('registry down')) : NEVER;
    });
    const harness = await start({ validator, limits: { validationTimeoutMs: 100 } });
    const client = await open(harness.server);
    expect(await client.handshake({ streamId: 'errors' }).reply).toBe('reset');
    expect(await client.handshake({ streamId: 'throws' }).reply).toBe('reset');
    expect(await client.handshake({ streamId: 'stalls' }).reply).toBe('reset');
    expect(counted(harness.events)).toBe(3);
  });

  it('resets a wrong prologue, a wrong executor key and a tampered message 1 without validating', async () => {
    const validator = new ScriptedValidator();
    const harness = await start({ validator });
    const client = await open(harness.server);
    expect(await client.handshake({ environmentId: 'other-environment' }).reply).toBe('reset');
    expect(await client.handshake({ registrationId: 'other-registration' }).reply).toBe('reset');
    expect(
      await client.handshake({ executorKey: NoiseChannelIdentity.generate().publicKey() }).reply,
    ).toBe('reset');
    expect(await client.handshake({ tamper: true }).reply).toBe('reset');
    expect(validator.calls).toEqual([]);
    expect(counted(harness.events)).toBe(4);
    for (const frame of client.received) {
      expect(frame).toMatchObject({ kind: 'reset', reason: 'noise_relay_protocol_error' });
    }
  });

  it('resets an authorization over 4096 bytes without calling the validator', async () => {
    const validator = new ScriptedValidator();
    const harness = await start({ validator });
    const client = await open(harness.server);
    const reply = client.handshake({ authorization: new Uint8Array(4097).fill(0x61) }).reply;
    expect(await reply).toBe('reset');
    expect(validator.calls).toEqual([]);
    expect(counted(harness.events)).toBe(1);
  });

  it('keeps the socket and its open streams after the 8th failure, refuses new handshakes during the cooldown, then admits with a fresh count', async () => {
    const validator = new ScriptedValidator();
    const harness = await start({ validator, limits: { failedHandshakeCooldownMs: 400 } });
    const client = await open(harness.server);
    const survivor = await client.openStream();
    const sessionId = await survivor.initialize();
    // Failures and successes interleave: a success never lowers the count.
    for (let i = 0; i < 4; i++)
      expect(await client.handshake({ tamper: true }).reply).toBe('reset');
    await client.openStream();
    for (let i = 0; i < 4; i++)
      expect(await client.handshake({ tamper: true }).reply).toBe('reset');
    expect(harness.events).toContainEqual({ kind: 'cooldown-started', failures: 8 });

    // Cooling down: a valid handshake is refused and the validator is not asked.
    const callsBefore = validator.calls.length;
    expect(await client.handshake().reply).toBe('reset');
    expect(validator.calls.length).toBe(callsBefore);
    // The socket and the stream opened earlier are still up.
    expect((await survivor.request('environment/status')).result).toBeDefined();
    expect(harness.ended).toEqual([]);

    // The count belongs to this socket: another socket is admitted at once.
    const other = await open(harness.server);
    expect(await other.handshake().reply).not.toBe('reset');

    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(harness.events).toContainEqual({ kind: 'cooldown-ended' });
    expect(await client.handshake().reply).not.toBe('reset');
    // Fresh count: seven failures do not start another cooldown.
    for (let i = 0; i < 7; i++)
      expect(await client.handshake({ tamper: true }).reply).toBe('reset');
    expect(await client.handshake().reply).not.toBe('reset');
    expect(await client.handshake({ tamper: true }).reply).toBe('reset');
    expect(harness.events.filter((e) => e.kind === 'cooldown-started')).toHaveLength(2);
    expect(sessionId).toMatch(/\S/);
  });

  it('counts duplicate handshakes on a pending stream and data sent before the handshake completed', async () => {
    const validator = new ScriptedValidator(() => NEVER);
    const harness = await start({ validator, limits: { failedHandshakeCooldownMs: 60_000 } });
    const client = await open(harness.server);
    // Duplicate handshake while the first is validating: reset + counted.
    for (let i = 0; i < 4; i++) {
      const streamId = `duplicate-${i}`;
      const first = client.handshake({ streamId });
      client.handshake({ streamId });
      // One reset answers both (the first waiter on the stream receives it).
      expect(await first.reply).toBe('reset');
    }
    // Handshake + immediate data: reset + counted.
    for (let i = 0; i < 4; i++) {
      const { streamId, reply } = client.handshake({ streamId: `early-${i}` });
      client.send(dataFrame(streamId, 0, new Uint8Array(32)));
      expect(await reply).toBe('reset');
    }
    expect(counted(harness.events)).toBe(8);
    expect(harness.events).toContainEqual({ kind: 'cooldown-started', failures: 8 });
    expect(harness.ended).toEqual([]);
  });

  it('refuses beyond the validation limit without counting', async () => {
    const validator = new ScriptedValidator((id) => (id.startsWith('held') ? NEVER : of(true)));
    const harness = await start({
      validator,
      limits: { maxPendingValidations: 2 },
    });
    const client = await open(harness.server);
    client.handshake({ streamId: 'held-1' });
    client.handshake({ streamId: 'held-2' });
    // Two validations in flight: a third handshake is refused before validation.
    expect(await client.handshake({ streamId: 'held-3' }).reply).toBe('reset');
    expect(validator.calls).toEqual(['held-1', 'held-2']);
    expect(harness.events).toContainEqual(
      expect.objectContaining({ reason: 'too-many-validations', counted: false }),
    );
    expect(counted(harness.events)).toBe(0);
  });

  it('refuses a third stream when two are active', async () => {
    const harness = await start({ limits: { maxActiveStreams: 2 } });
    const client = await open(harness.server);
    await client.openStream();
    await client.openStream();
    expect(await client.handshake().reply).toBe('reset');
    expect(harness.events).toContainEqual(
      expect.objectContaining({ reason: 'too-many-streams', counted: false }),
    );
  });

  it('resets a second handshake on an active stream', async () => {
    const harness = await start();
    const client = await open(harness.server);
    const stream = await client.openStream();
    expect(await client.handshake({ streamId: stream.streamId }).reply).toBe('reset');
    expect(counted(harness.events)).toBe(0);
  });

  it('resets the stream when its connection processor closes it', async () => {
    const harness = await start();
    const client = await open(harness.server);
    const stream = await client.openStream();
    await stream.initialize();
    // An unknown notification makes the executor close the connection (as 0.169.0 does).
    stream.send({ method: 'no/such-notification' });
    await expect(stream.nextMessage()).rejects.toThrow(/was reset/);
    expect(harness.events).toContainEqual({
      kind: 'stream-closed',
      streamId: stream.streamId,
      reset: true,
    });
  });

  it('drops a stream whose records do not decrypt, keeping the others', async () => {
    const harness = await start();
    const client = await open(harness.server);
    const broken = await client.openStream();
    const healthy = await client.openStream();
    client.send(dataFrame(broken.streamId, 0, new Uint8Array(64).fill(7)));
    expect(await client.nextFrame(broken.streamId)).toMatchObject({ kind: 'reset' });
    expect(await healthy.initialize()).toMatch(/\S/);
  });

  it('detaches the session when the harness resets its stream, so another stream can resume it', async () => {
    const harness = await start();
    const client = await open(harness.server);
    const first = await client.openStream();
    const sessionId = await first.initialize();
    client.send(resetFrame(first.streamId));
    // Detaching is asynchronous; retry the resume briefly.
    let resumed: string | undefined;
    for (let attempt = 0; attempt < 50 && resumed === undefined; attempt++) {
      const second = await client.openStream();
      resumed = await second.initialize(sessionId).catch(() => undefined);
      if (resumed === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    expect(resumed).toBe(sessionId);
    expect(harness.events).toContainEqual({
      kind: 'stream-closed',
      streamId: first.streamId,
      reset: false,
    });
  });

  it('sessions survive the relay socket: resume on a new socket', async () => {
    const harness = await start();
    const client = await open(harness.server);
    const stream = await client.openStream();
    const sessionId = await stream.initialize();
    const ended = nextEnd(harness);
    client.close();
    expect(await ended).toBe('peer_close');
    const again = await open(harness.server);
    expect(await (await again.openStream()).initialize(sessionId)).toBe(sessionId);
  });

  it('drops garbage frames and keeps serving', async () => {
    const harness = await start();
    const client = await open(harness.server);
    client.sendRaw('{"not":"binary"}');
    client.sendRaw(Uint8Array.from([0xff, 0xff, 0xff, 0xff]));
    client.sendRaw(Uint8Array.from([0x08, 0x02, 0x12, 0x01, 0x61, 0x4a, 0x00])); // version 2
    client.sendRaw(Uint8Array.from([0x08, 0x01, 0x12, 0x01, 0x61])); // no body
    const stream = await client.openStream();
    expect(await stream.initialize()).toMatch(/\S/);
    expect(harness.events.filter((e) => e.kind === 'frame-dropped')).toHaveLength(4);
  });

  it('ends the relay with read_error on a frame over 256 KiB', async () => {
    const harness = await start();
    const client = await open(harness.server);
    const ended = nextEnd(harness);
    client.sendRaw(new Uint8Array(256 * 1024 + 1));
    expect(await ended).toBe('read_error');
    expect((await client.closed).code).toBe(1009);
    // The executor is still up for everybody else.
    const other = await open(harness.server);
    expect(await (await other.openStream()).initialize()).toMatch(/\S/);
  });

  it('sends keepalive pings and ends with pong_timeout when they go unanswered', async () => {
    // Deadlines generous enough that a loaded CI machine cannot starve the answering socket.
    const harness = await start({ keepalive: { pingIntervalMs: 100, pongTimeoutMs: 1_000 } });
    const answering = await open(harness.server);
    const silent = await open(harness.server, { autoPong: false });
    let pings = 0;
    silent.socket.on('ping', () => pings++);
    const ended = nextEnd(harness);
    expect(await ended).toBe('pong_timeout');
    expect(pings).toBeGreaterThanOrEqual(1);
    // The answering socket stays up past several deadlines.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(harness.ended).toEqual(['pong_timeout']);
    expect(await (await answering.openStream()).initialize()).toMatch(/\S/);
  });

  it('never lets a frame reach a stream that is not admitted (no application data before validation)', async () => {
    const validator = new ScriptedValidator(() => NEVER);
    const harness = await start({ validator });
    const client = await open(harness.server);
    client.send(dataFrame('unknown-stream', 0, new Uint8Array(16)));
    expect(await client.nextFrame('unknown-stream')).toMatchObject({ kind: 'reset' });
    expect(harness.server.executor.sessionCount).toBe(0);
    expect(encodeRelayFrame(resetFrame('x')).length).toBeGreaterThan(0);
  });
});
