/**
 * Fault injection over real 127.0.0.1 sockets and the Noise path: a 32 MiB process output
 * stream survives 20 forced transport drops with every byte delivered once and in order, and
 * stdin writes interrupted by a drop reach the process exactly once. `cat` echoes what we
 * write, so the output's sha256 proves both: a lost, duplicated or reordered write or output
 * chunk changes the digest. Also: a silent network trips the Noise harness Pong watchdog.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { filter, firstValueFrom, from, lastValueFrom, mergeMap, tap } from 'rxjs';
import { LazyRemoteExecServerClient, noiseRendezvous } from '../../src/environment/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { closeAllExecutors, RecordingHarness, startTestExecutor } from './support/testExecutors.js';
import { TestRegistry } from './support/testRegistry.js';

const TOTAL_BYTES = 32 * 1024 * 1024;
const WRITE_BYTES = 256 * 1024;
const DROPS = 20;
const WRITES_IN_FLIGHT = 2;

const clients: LazyRemoteExecServerClient[] = [];
const servers: Server[] = [];
const frozenSockets: (() => Socket[])[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const sockets of frozenSockets.splice(0)) for (const socket of sockets()) socket.destroy();
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
  await closeAllExecutors();
});

describe('recovery under transport faults', () => {
  it('delivers 32 MiB of process output exactly once and in order across 20 forced drops', async () => {
    const executor = await startTestExecutor();
    const registry = new TestRegistry(executor.target);
    const harness = new RecordingHarness();
    const client = new LazyRemoteExecServerClient(
      noiseRendezvous(registry, NoiseChannelIdentity.generate(), {
        connectHarness: harness.connect,
      }),
    );
    clients.push(client);
    const session = await firstValueFrom(client.get());
    const sessionId = session.sessionId;
    const cat = await firstValueFrom(
      session.startProcess({
        argv: ['cat'],
        cwd: '/tmp',
        pipeStdin: true,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      }),
    );

    const input = randomBytes(TOTAL_BYTES);
    const expectedDigest = createHash('sha256').update(input).digest('hex');
    const received = createHash('sha256');
    let receivedBytes = 0;
    let drops = 0;
    let clientSideDrop = true;
    let interruptedWrite = false;
    const dropEvery = Math.floor(TOTAL_BYTES / (DROPS + 1));
    const dropNow = () => {
      drops += 1;
      // Alternate: the client closes its harness stream / the executor loses its sockets.
      if (clientSideDrop) harness.dropLatest();
      else executor.server.dropConnections();
      clientSideDrop = !clientSideDrop;
    };
    const allReceived = new Promise<void>((resolve, reject) => {
      cat.stdout$.subscribe({
        next: (chunk) => {
          received.update(chunk);
          receivedBytes += chunk.length;
          if (receivedBytes === TOTAL_BYTES) resolve();
          if (
            drops < DROPS &&
            receivedBytes >= (drops + 1) * dropEvery &&
            session.state === 'connected'
          ) {
            dropNow();
          }
        },
        error: reject,
      });
    });

    // Two writes in flight at a time (in order); after a drop each is re-sent with its writeId
    // and written once. Keeping unread output under the executor's 1 MiB retention.
    const chunks = Array.from({ length: TOTAL_BYTES / WRITE_BYTES }, (_, index) => index);
    await lastValueFrom(
      from(chunks).pipe(
        mergeMap((index) => {
          const write = cat.write(input.subarray(index * WRITE_BYTES, (index + 1) * WRITE_BYTES));
          // One write is interrupted by a drop while it is in flight.
          if (index !== 8) return write;
          return write.pipe(
            tap({
              subscribe: () =>
                queueMicrotask(() => {
                  interruptedWrite = true;
                  dropNow();
                }),
            }),
          );
        }, WRITES_IN_FLIGHT),
      ),
      { defaultValue: undefined },
    );
    await allReceived;

    expect(receivedBytes).toBe(TOTAL_BYTES);
    expect(received.digest('hex')).toBe(expectedDigest);
    expect(drops).toBeGreaterThanOrEqual(DROPS);
    expect(interruptedWrite).toBe(true);
    // Every drop was recovered on the same session; nothing was replaced.
    expect(session.state).toBe('connected');
    expect(await firstValueFrom(client.get())).toBe(session);
    expect(session.sessionId).toBe(sessionId);
    expect(harness.transports.length).toBeGreaterThan(DROPS);
    expect(client.connectionState).toBe('Connected');
    await firstValueFrom(cat.terminate());
  }, 60_000);

  it('a silent network trips the Pong watchdog, and the same session resumes', async () => {
    const executor = await startTestExecutor();
    const proxy = await freezingProxy(executor.target.url);
    const registry = new TestRegistry({ ...executor.target, url: proxy.url });
    const harness = new RecordingHarness({ keepalive: { pingIntervalMs: 25, pongTimeoutMs: 100 } });
    const client = new LazyRemoteExecServerClient(
      noiseRendezvous(registry, NoiseChannelIdentity.generate(), {
        connectHarness: harness.connect,
      }),
    );
    clients.push(client);
    const session = await firstValueFrom(client.get());
    const disconnects: string[] = [];
    session.disconnected$.subscribe((error) => disconnects.push(error.message));
    // Several keepalive rounds pass while the network carries Pongs.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(session.state).toBe('connected');

    const frozenAt = Date.now();
    proxy.freeze();
    await firstValueFrom(session.state$.pipe(filter((state) => state === 'recovering')));
    const detectedAfterMs = Date.now() - frozenAt;
    // The network finally reports the dead connection to the executor, which detaches.
    proxy.destroyFrozen();
    await firstValueFrom(session.state$.pipe(filter((state) => state === 'connected')));
    expect(disconnects).toHaveLength(1);
    expect(disconnects[0]).toContain('pong_timeout');
    expect(detectedAfterMs).toBeGreaterThanOrEqual(100);
    expect(await firstValueFrom(client.get())).toBe(session);
    expect(await firstValueFrom(session.environmentStatus())).toBe('ready');
  });
});

/** A TCP proxy that can freeze its current connections (no bytes either way, no close). */
async function freezingProxy(upstreamUrl: string) {
  const upstream = new URL(upstreamUrl);
  let live: Socket[] = [];
  let frozen: Socket[] = [];
  const server = createServer((downstream) => {
    const up = connect(Number(upstream.port), upstream.hostname);
    for (const socket of [downstream, up]) socket.on('error', () => undefined);
    downstream.pipe(up).pipe(downstream);
    live.push(downstream, up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  frozenSockets.push(() => [...live, ...frozen]);
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    freeze: () => {
      for (const socket of live) {
        socket.unpipe();
        socket.pause();
      }
      frozen = [...frozen, ...live];
      live = [];
    },
    destroyFrozen: () => {
      for (const socket of frozen) socket.resetAndDestroy();
      frozen = [];
    },
  };
}
