/**
 * Fault injection over real 127.0.0.1 sockets and the Noise path: a 32 MiB process output
 * stream survives 20 forced transport drops with every byte delivered once and in order, and
 * stdin writes interrupted by a drop reach the process exactly once. Each stdin line asks the
 * child for one deterministic 256 KiB block, so the output's sha256 proves both: a lost,
 * duplicated or reordered line or output chunk changes the digest. Also: a silent network trips the Noise harness Pong watchdog.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { BehaviorSubject, filter, firstValueFrom } from 'rxjs';
import { LazyRemoteExecServerClient, noiseRendezvous } from '../../src/environment/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { closeAllExecutors, RecordingHarness, startTestExecutor } from './support/testExecutors.js';
import { TestRegistry } from './support/testRegistry.js';
import { block, BLOCK_BYTES, BLOCK_GENERATOR } from '../support/blockGenerator.js';

const BLOCKS = 128;
const TOTAL_BYTES = BLOCK_BYTES * BLOCKS; // 32 MiB
const DROPS = 20;

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
    const generator = await firstValueFrom(
      session.startProcess({
        argv: [process.execPath, '-e', BLOCK_GENERATOR],
        cwd: '/tmp',
        pipeStdin: true,
        env: { BLOCK_BYTES: String(BLOCK_BYTES) },
      }),
    );

    const expected = createHash('sha256');
    for (let index = 0; index < BLOCKS; index += 1) expected.update(block(index));
    const expectedDigest = expected.digest('hex');
    const received = createHash('sha256');
    const receivedBytes = new BehaviorSubject(0);
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
    const streamFailure = new Promise<never>((_, reject) => {
      generator.stdout$.subscribe({
        next: (chunk) => {
          received.update(chunk);
          const total = receivedBytes.value + chunk.length;
          receivedBytes.next(total);
          if (drops < DROPS && total >= (drops + 1) * dropEvery && session.state === 'connected') {
            dropNow();
          }
        },
        error: reject,
      });
    });

    // One stdin line per 256 KiB block; the next line goes out only once the output is at
    // most two blocks behind, which keeps unread output within the executor's 1 MiB
    // retention. After a drop each write is re-sent with its writeId and lands once: a
    // duplicated or lost line would add or drop a whole block.
    const run = (async () => {
      for (let index = 0; index < BLOCKS; index += 1) {
        await firstValueFrom(
          receivedBytes.pipe(filter((bytes) => bytes >= (index - 2) * BLOCK_BYTES)),
        );
        const write = firstValueFrom(generator.write(`${index}\n`));
        if (index === 8) {
          // A write interrupted by a drop while it is in flight.
          interruptedWrite = true;
          dropNow();
        }
        await write;
      }
      await firstValueFrom(receivedBytes.pipe(filter((bytes) => bytes >= TOTAL_BYTES)));
    })();
    await Promise.race([run, streamFailure]);

    expect(receivedBytes.value).toBe(TOTAL_BYTES);
    expect(received.digest('hex')).toBe(expectedDigest);
    expect(drops).toBeGreaterThanOrEqual(DROPS);
    expect(interruptedWrite).toBe(true);
    // Every drop was recovered on the same session; nothing was replaced.
    expect(session.state).toBe('connected');
    expect(await firstValueFrom(client.get())).toBe(session);
    expect(session.sessionId).toBe(sessionId);
    expect(harness.transports.length).toBeGreaterThan(DROPS);
    expect(client.connectionState).toBe('Connected');
    await firstValueFrom(generator.terminate());
  }, 180_000);

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
