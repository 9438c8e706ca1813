/**
 * The rendezvous relay over real WebSockets on 127.0.0.1, driven with raw relay frames (no
 * Noise: the relay never looks inside payloads, so any bytes do).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { VirtualTimeScheduler, filter, firstValueFrom, timeout } from 'rxjs';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import {
  dataFrame,
  encodeRelayFrame,
  handshakeFrame,
  NOISE_RELAY_RESET_REASON,
  resetFrame,
  resumeFrame,
  type RelayFrame,
} from '../../src/relay/index.js';
import { EnvironmentRegistryClient } from '../../src/registry/index.js';
import {
  RendezvousFrameError,
  signRendezvousUrl,
  startRendezvous,
  type Rendezvous,
  type RendezvousEvent,
  type RendezvousOptions,
} from '../../src/rendezvous/index.js';
import { openRelaySocket, type RawRelaySocket } from '../support/rendezvousSockets.js';

const TOKEN = 'relay-token';
const HARNESS_TOKEN = 'relay-harness-token';
const SECRET = new Uint8Array(32).fill(3);
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

interface Fixture {
  rendezvous: Rendezvous;
  events: RendezvousEvent[];
  registrationId: string;
  executorUrl: string;
  harnessUrl: string;
  executor: RawRelaySocket;
  harness(): Promise<RawRelaySocket>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: Partial<RendezvousOptions> = {}): Promise<Fixture> {
  const rendezvous = await startRendezvous({
    executorToken: TOKEN,
    harnessToken: HARNESS_TOKEN,
    secret: SECRET,
    ...options,
  });
  cleanups.push(() => rendezvous.close());
  const events: RendezvousEvent[] = [];
  rendezvous.events.subscribe((event) => events.push(event));
  const registry = new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: TOKEN });
  const harnessRegistry = new EnvironmentRegistryClient({
    baseUrl: rendezvous.url,
    bearerToken: HARNESS_TOKEN,
  });
  const registration = await firstValueFrom(
    registry.register('env-1', NoiseChannelIdentity.generate().toJSON()),
  );
  const open = async (url: string): Promise<RawRelaySocket> => {
    const socket = await openRelaySocket(url);
    cleanups.push(() => socket.close());
    return socket;
  };
  const executor = await open(registration.websocketUrl);
  const bundle = await firstValueFrom(
    harnessRegistry.connect('env-1', NoiseChannelIdentity.generate().toJSON()),
  );
  return {
    rendezvous,
    events,
    registrationId: registration.executorRegistrationId,
    executorUrl: registration.websocketUrl,
    harnessUrl: bundle.websocketUrl,
    executor,
    harness: () => open(bundle.websocketUrl),
  };
}

/** The frame's bytes as the sender encoded them: the relay forwards them unchanged. */
const wire = (frame: RelayFrame): Buffer => Buffer.from(encodeRelayFrame(frame));

const dropped = (events: RendezvousEvent[]): RendezvousFrameError[] =>
  events.flatMap((event) => (event.type === 'frame-dropped' ? [event.error] : []));

describe('rendezvous upgrade checks', () => {
  it('401 for a bad sig, 404 for an unknown path or registration, 409 while offline', async () => {
    const rendezvous = await startRendezvous({ executorToken: TOKEN, secret: SECRET });
    cleanups.push(() => rendezvous.close());
    const registry = new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: TOKEN });
    const { executorRegistrationId: registrationId, websocketUrl } = await firstValueFrom(
      registry.register('env-1', NoiseChannelIdentity.generate().toJSON()),
    );
    const base = rendezvous.url.replace('http', 'ws');
    const harnessUrl = signRendezvousUrl(base, SECRET, {
      role: 'harness',
      environmentId: 'env-1',
      registrationId,
      expiresAtMs: Date.now() + 60_000,
    });
    const staleUrl = signRendezvousUrl(base, SECRET, {
      role: 'environment',
      environmentId: 'env-1',
      registrationId: 'some-old-registration',
      expiresAtMs: Date.now() + 60_000,
    });
    await expect(openRelaySocket(websocketUrl.replace(/sig=.*/, 'sig=forged'))).rejects.toThrow(
      'HTTP 401',
    );
    await expect(
      openRelaySocket(websocketUrl.replace('role=environment', 'role=harness')),
    ).rejects.toThrow('HTTP 401');
    await expect(openRelaySocket(`${base}/elsewhere`)).rejects.toThrow('HTTP 404');
    await expect(openRelaySocket(staleUrl)).rejects.toThrow('HTTP 404');
    await expect(openRelaySocket(harnessUrl)).rejects.toThrow('HTTP 409');
    expect(rendezvous.counters().upgradesRefused).toBe(5);
  });
});

describe('rendezvous relay routing', () => {
  it('routes frames by stream id, byte for byte, in both directions', async () => {
    const { executor, harness } = await start();
    const [a, b] = [await harness(), await harness()];
    const toExecutor = [
      resumeFrame('stream-a'),
      handshakeFrame('stream-a', bytes('msg1-a')),
      resumeFrame('stream-b'),
      dataFrame('stream-b', 0, bytes('b0'), { traceparent: '00-trace' }),
    ];
    a.send(toExecutor[0]!);
    a.send(toExecutor[1]!);
    await executor.next();
    await executor.next();
    b.send(toExecutor[2]!);
    b.send(toExecutor[3]!);
    await executor.next();
    await executor.next();
    expect(executor.received.map((entry) => Buffer.from(entry.bytes))).toEqual(
      toExecutor.map(wire),
    );

    executor.send(dataFrame('stream-b', 0, bytes('to-b')));
    executor.send(handshakeFrame('stream-a', bytes('msg2-a')));
    expect(await b.next()).toEqual(dataFrame('stream-b', 0, bytes('to-b')));
    expect(await a.next()).toEqual(handshakeFrame('stream-a', bytes('msg2-a')));
    expect(a.received).toHaveLength(1);
    expect(b.received).toHaveLength(1);
  });

  it('resets a stream at the executor when its harness socket goes away', async () => {
    const { executor, harness, rendezvous } = await start();
    const a = await harness();
    a.send(resumeFrame('stream-a'));
    await executor.next();
    await a.close();
    expect(await executor.next()).toEqual(resetFrame('stream-a', NOISE_RELAY_RESET_REASON));
    expect((await rendezvous.environment('env-1'))?.streams).toBe(0);
  });

  it('forwards a harness reset and forgets the stream', async () => {
    const { executor, harness } = await start();
    const a = await harness();
    a.send(resumeFrame('stream-a'));
    a.send(resetFrame('stream-a', 'bye'));
    await executor.next();
    expect(await executor.next()).toEqual(resetFrame('stream-a', 'bye'));
    // The stream is released: data on it is now unclaimed.
    a.send(dataFrame('stream-a', 0, bytes('late')));
    expect(await a.next()).toEqual(resetFrame('stream-a'));
  });

  it('refuses frames on unclaimed streams and streams another harness holds', async () => {
    const { executor, harness, events } = await start();
    const [a, b] = [await harness(), await harness()];
    a.send(dataFrame('stream-x', 0, bytes('no resume')));
    expect(await a.next()).toEqual(resetFrame('stream-x'));
    a.send(resumeFrame('stream-a'));
    b.send(resumeFrame('stream-a'));
    expect(await b.next()).toEqual(resetFrame('stream-a'));
    b.send(handshakeFrame('stream-a', bytes('hijack')));
    expect(await b.next()).toEqual(resetFrame('stream-a'));
    // Only A's resume reached the executor, and A's stream still works.
    a.send(handshakeFrame('stream-a', bytes('msg1')));
    expect(await executor.next()).toEqual(resumeFrame('stream-a'));
    expect(await executor.next()).toEqual(handshakeFrame('stream-a', bytes('msg1')));
    executor.send(handshakeFrame('stream-a', bytes('msg2')));
    expect(await a.next()).toEqual(handshakeFrame('stream-a', bytes('msg2')));
    expect(dropped(events).map((error) => error.reason)).toEqual([
      'unclaimed_stream',
      'stream_in_use',
      'unclaimed_stream',
    ]);
  });

  it('drops malformed and text messages with a typed error, keeping the sockets', async () => {
    const { executor, harness, events, rendezvous } = await start();
    const a = await harness();
    a.sendRaw(new Uint8Array([0xff, 0xff, 0xff]));
    a.sendRaw('{"jsonrpc":"2.0"}');
    a.sendRaw(new Uint8Array([0x08, 0x02, 0x12, 0x01, 0x73, 0x3a, 0x00])); // version 2
    executor.sendRaw(new Uint8Array([0x08, 0x01, 0x12, 0x01, 0x73])); // no body
    a.send(resumeFrame('stream-a'));
    expect(await executor.next()).toEqual(resumeFrame('stream-a'));
    const errors = dropped(events);
    expect(errors.map((error) => [error.from, error.reason])).toEqual([
      ['harness', 'malformed_frame'],
      ['harness', 'text_message'],
      ['harness', 'malformed_frame'],
      ['environment', 'malformed_frame'],
    ]);
    expect(errors.every((error) => error instanceof RendezvousFrameError)).toBe(true);
    expect(errors[2]!.message).toContain('unsupported relay message frame version 2');
    expect(errors[3]!.message).toContain('relay message frame is missing body');
    expect(rendezvous.counters().framesDropped).toBe(4);
  });

  it('answers executor frames for unknown streams with a reset, but never a reset with one', async () => {
    const { executor } = await start();
    executor.send(resetFrame('gone-1'));
    executor.send(dataFrame('gone-2', 3, bytes('late')));
    expect(await executor.next()).toEqual(resetFrame('gone-2'));
    expect(executor.received).toHaveLength(1);
  });

  it('refuses a stream past the per-environment limit', async () => {
    const { executor, harness } = await start({ maxStreamsPerEnvironment: 2 });
    const a = await harness();
    for (const id of ['s1', 's2', 's3']) a.send(resumeFrame(id));
    expect(await a.next()).toEqual(resetFrame('s3'));
    await executor.next();
    await executor.next();
    expect(executor.received.map((entry) => entry.frame.streamId)).toEqual(['s1', 's2']);
  });
});

describe('rendezvous back-pressure', () => {
  const FRAME = new Uint8Array(200 * 1024).fill(0x5a);

  const HIGH_WATER = 256 * 1024;
  /** Frame `seq` of stream `slow`, its payload marked with the seq so reordering shows. */
  const numbered = (seq: number): RelayFrame => dataFrame('slow', seq, FRAME.fill(seq % 251));
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  const waitFor = (fixture: Fixture, type: RendezvousEvent['type']): Promise<RendezvousEvent> =>
    firstValueFrom(
      fixture.rendezvous.events.pipe(
        filter((event) => event.type === type),
        timeout(10_000),
      ),
    );

  /** A harness that claimed stream `slow` and then stopped reading its socket. */
  async function slowHarness(fixture: Fixture): Promise<RawRelaySocket> {
    const slow = await fixture.harness();
    slow.send(resumeFrame('slow'));
    await fixture.executor.next();
    slow.socket.pause(); // stops reading from TCP: the rendezvous' send buffer fills up
    return slow;
  }

  it('pauses the executor for a harness that reads slowly, losing nothing and keeping order', async () => {
    const fixture = await start({ maxBufferedBytes: HIGH_WATER });
    const { executor, events } = fixture;
    const slow = await slowHarness(fixture);
    const paused = waitFor(fixture, 'executor-paused');
    // 40 MiB: more than the loopback socket buffers of both legs can hold.
    const count = 200;
    for (let seq = 0; seq < count; seq++) executor.send(numbered(seq));
    expect(await paused).toMatchObject({ streamId: 'slow' });
    await sleep(300);
    // TCP back-pressure reached the executor: its own socket holds what the relay won't read.
    expect(executor.socket.bufferedAmount).toBeGreaterThan(0);
    const resumed = waitFor(fixture, 'executor-resumed');
    slow.socket.resume();
    for (let seq = 0; seq < count; seq++) {
      const frame = await slow.next(10_000);
      expect(frame).toMatchObject({ kind: 'data', streamId: 'slow', seq });
      if (frame.kind !== 'data') throw new Error('unreachable');
      expect(frame.payload.length).toBe(FRAME.length);
      expect(frame.payload[0]).toBe(seq % 251);
      expect(frame.payload[FRAME.length - 1]).toBe(seq % 251);
    }
    await resumed;
    expect(executor.received).toHaveLength(1); // only the resume, no reset: the stream survived
    expect(events.filter((event) => event.type === 'harness-dropped')).toEqual([]);
  });

  it('drops a harness that makes no progress for the stall timeout, resetting its stream', async () => {
    const scheduler = new VirtualTimeScheduler();
    /** Runs every scheduled action up to `ms` of virtual time from now. */
    const advance = (ms: number): void => {
      const until = scheduler.frame + ms;
      scheduler.schedule(() => undefined, ms);
      scheduler.maxFrames = until;
      scheduler.flush();
    };
    const fixture = await start({
      maxBufferedBytes: HIGH_WATER,
      harnessStallTimeoutMs: 30_000,
      scheduler,
      keepalive: { pingIntervalMs: 3_600_000, pongTimeoutMs: 3_600_000 },
    });
    const { executor, events } = fixture;
    const slow = await slowHarness(fixture);
    const paused = waitFor(fixture, 'executor-paused');
    for (let seq = 0; seq < 100; seq++) executor.send(numbered(seq));
    await paused;
    await sleep(300); // let frames in flight settle: from here on the harness makes no progress

    advance(29_999);
    await sleep(100);
    expect(events.filter((event) => event.type === 'harness-dropped')).toEqual([]);
    expect(executor.received).toHaveLength(1); // only the resume

    const resumed = waitFor(fixture, 'executor-resumed');
    advance(1);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'harness-dropped', streamId: 'slow', why: 'stalled' }),
    );
    expect(await executor.next()).toEqual(resetFrame('slow'));
    slow.socket.resume(); // a paused client would never see the connection end
    expect(await slow.closed()).toBe(1006);
    await resumed; // the executor is read again: its other streams go on
    expect(await fixture.rendezvous.environment('env-1')).toMatchObject({
      streams: 0,
      harnessSockets: 0,
    });
  });

  it('holds harnesses back while the executor reads slowly, losing nothing', async () => {
    const { executor, harness } = await start({ maxBufferedBytes: 256 * 1024 });
    const fast = await harness();
    fast.send(resumeFrame('fast'));
    await executor.next();
    executor.socket.pause();
    const count = 100;
    for (let seq = 0; seq < count; seq++) fast.send(dataFrame('fast', seq, FRAME));
    await new Promise((resolve) => setTimeout(resolve, 200));
    executor.socket.resume();
    const seqs: number[] = [];
    for (let i = 0; i < count; i++) {
      const frame = await executor.next(10_000);
      if (frame.kind === 'data') seqs.push(frame.seq);
    }
    expect(seqs).toEqual([...Array(count).keys()]);
  });
});

describe('rendezvous executor lifecycle', () => {
  it('a reconnecting executor replaces the old socket; old streams are reset, new ones route', async () => {
    const { executor, harness, executorUrl, rendezvous, events } = await start();
    const a = await harness();
    a.send(resumeFrame('stream-a'));
    await executor.next();
    const replacement = await openRelaySocket(executorUrl);
    cleanups.push(() => replacement.close());
    expect(await executor.closed()).toBe(4000);
    expect(await a.next()).toEqual(resetFrame('stream-a'));
    a.send(resumeFrame('stream-a2'));
    expect(await replacement.next()).toEqual(resumeFrame('stream-a2'));
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'executor-detached', reason: 'replaced' }),
    );
    expect((await rendezvous.environment('env-1'))?.streams).toBe(1);
  });

  it('resets every harness stream when the executor socket closes', async () => {
    const { executor, harness } = await start();
    const a = await harness();
    a.send(resumeFrame('stream-a'));
    await executor.next();
    await executor.close();
    expect(await a.next()).toEqual(resetFrame('stream-a'));
    // A harness arriving now gets nowhere: its resume is refused.
    a.send(resumeFrame('stream-b'));
    expect(await a.next()).toEqual(resetFrame('stream-b'));
  });

  it('drops an executor that stops answering Pings (pong_timeout), keeps one that answers', async () => {
    const rendezvous = await startRendezvous({
      executorToken: TOKEN,
      keepalive: { pingIntervalMs: 30, pongTimeoutMs: 500 },
    });
    cleanups.push(() => rendezvous.close());
    const registry = new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: TOKEN });
    const key = NoiseChannelIdentity.generate().toJSON();
    const [silent, answering] = await Promise.all(
      ['env-silent', 'env-answering'].map((id) => firstValueFrom(registry.register(id, key))),
    );
    const detached = firstValueFrom(
      rendezvous.events.pipe(
        filter((event) => event.type === 'executor-detached'),
        timeout(5_000),
      ),
    );
    const sockets = [
      await openRelaySocket(silent!.websocketUrl, { autoPong: false }),
      await openRelaySocket(answering!.websocketUrl),
    ];
    cleanups.push(async () => {
      for (const socket of sockets) await socket.close();
    });
    expect(await detached).toMatchObject({ reason: 'pong_timeout', environmentId: 'env-silent' });
    expect(await sockets[0]!.closed()).toBe(1006);
    expect((await rendezvous.environment('env-answering'))?.attachedRegistrationId).toBe(
      answering!.executorRegistrationId,
    );
  });
});
