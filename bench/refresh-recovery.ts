/**
 * Lifecycle figures on loopback, over the Noise path (direct-Noise executors, in-process):
 *  - refresh: `refreshConnection()` to a new executor, from the call to `Connected` and a
 *    passing `environment/status` probe;
 *  - recovery: from a dropped transport (client-side close, or the executor dropping its
 *    sockets) until the same session is `connected` again;
 *  - for comparison, recovery over a plain WebSocket executor.
 * Run: npx tsx bench/refresh-recovery.ts [iterations=40]
 */
import { performance } from 'node:perf_hooks';
import { filter, firstValueFrom, lastValueFrom, skip } from 'rxjs';
import type { ExecServerClient } from '../src/client/index.js';
import {
  LazyRemoteExecServerClient,
  noiseRendezvous,
  webSocketUrl,
} from '../src/environment/index.js';
import { NoiseChannelIdentity } from '../src/noise/index.js';
import { startExecServer } from '../src/server/index.js';
import {
  RecordingHarness,
  closeAllExecutors,
  startTestExecutor,
} from '../spec/environment/support/testExecutors.js';
import { TestRegistry } from '../spec/environment/support/testRegistry.js';
import { startDroppingProxy } from '../spec/support/droppingProxy.js';

const iterations = Number(process.argv[2] ?? 40);

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function report(label: string, samples: readonly number[]): void {
  const f = (ms: number) => `${ms.toFixed(1)} ms`;
  console.log(
    `${label.padEnd(52)} p50 ${f(percentile(samples, 50))}  p90 ${f(percentile(samples, 90))}  min ${f(Math.min(...samples))}  (n=${samples.length})`,
  );
}

/** Time from `drop()` until `session` is connected again. */
async function recoveryTime(session: ExecServerClient, drop: () => void): Promise<number> {
  const resumed = firstValueFrom(
    session.state$.pipe(
      skip(1),
      filter((state) => state !== 'recovering'),
    ),
  );
  const start = performance.now();
  drop();
  const state = await resumed;
  if (state !== 'connected')
    throw new Error(`recovery ended ${state}: ${session.failure?.message}`);
  return performance.now() - start;
}

async function main(): Promise<void> {
  const a = await startTestExecutor();
  const b = await startTestExecutor();
  const registry = new TestRegistry(a.target);
  const harness = new RecordingHarness();
  const client = new LazyRemoteExecServerClient(
    noiseRendezvous(registry, NoiseChannelIdentity.generate(), { connectHarness: harness.connect }),
  );
  await firstValueFrom(client.get());

  // Warm-up (JIT, key caches), not measured.
  for (let i = 0; i < 3; i += 1) {
    registry.target = i % 2 === 0 ? b.target : a.target;
    await lastValueFrom(client.refreshConnection(), { defaultValue: undefined });
  }

  const refresh: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    registry.target = registry.target === a.target ? b.target : a.target;
    const start = performance.now();
    await lastValueFrom(client.refreshConnection(), { defaultValue: undefined });
    if (client.connectionState !== 'Connected') throw new Error('refresh did not connect');
    refresh.push(performance.now() - start);
  }

  const session = await firstValueFrom(client.get());
  const clientDrop: number[] = [];
  const executorDrop: number[] = [];
  const current = registry.target === a.target ? a : b;
  for (let i = 0; i < iterations; i += 1) {
    clientDrop.push(await recoveryTime(session, () => harness.dropLatest()));
    executorDrop.push(await recoveryTime(session, () => current.server.dropConnections()));
  }
  client.close();
  await closeAllExecutors();

  const plain = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  const proxy = await startDroppingProxy(plain.url);
  const plainClient = new LazyRemoteExecServerClient(webSocketUrl(proxy.url));
  const plainSession = await firstValueFrom(plainClient.get());
  const plainDrop: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    plainDrop.push(await recoveryTime(plainSession, () => proxy.drop()));
  }
  plainClient.close();
  await proxy.close();
  await plain.close();

  console.log(`refresh-recovery on loopback (node ${process.version}, ${iterations} iterations)`);
  report('refreshConnection() to a new executor (Noise)', refresh);
  report('recovery after client-side transport drop (Noise)', clientDrop);
  report('recovery after executor-side socket drop (Noise)', executorDrop);
  report('recovery after executor-side drop (plain WebSocket)', plainDrop);
}

await main();
