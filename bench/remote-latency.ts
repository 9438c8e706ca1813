/**
 * Remote latency, after upstream `codex-rs/exec-server/examples/remote_latency.rs`:
 * `connection_ms` (WebSocket open + initialize handshake), then per iteration
 * `fs_get_metadata_ms` (of the executor's cwd), `process_start_ms` (`/usr/bin/true`),
 * `process_completion_wait_ms` (start answered → `process/closed`) and `process_completion_ms`
 * (start sent → closed); each as min/p50/p95/max/mean over 30 measured iterations after 5
 * warm-ups (`EXEC_SERVER_LATENCY_ITERATIONS`, `EXEC_SERVER_LATENCY_WARMUP_ITERATIONS`).
 *
 * Three columns, measured interleaved (the order rotates every iteration, so drift and load
 * spikes hit all of them alike):
 *   - codex 0.169.0 binary + our client (ExecServerClient over connectWebSocket)
 *   - codex 0.169.0 binary + the hand-written baseline client (bench/handwritten-client.ts)
 *   - our TypeScript executor (own process) + our client
 *
 * Run: `npx tsx bench/remote-latency.ts`
 */
import { loadavg } from 'node:os';
import { compiledLatencyDrivers } from './support/compiledClients.js';
import type { LatencyClient, LatencySession } from './support/latencyDrivers.js';
import {
  startCodexExecServer,
  startTsExecutorProcess,
  type RunningExecServer,
} from './support/executors.js';
import { elapsedMs, p50RatioInterval, summarize, type Summary } from './support/stats.js';

const METRICS = [
  'connection_ms',
  'fs_get_metadata_ms',
  'process_start_ms',
  'process_completion_wait_ms',
  'process_completion_ms',
] as const;
type Metric = (typeof METRICS)[number];

interface Column {
  readonly label: string;
  readonly url: string;
  readonly client: LatencyClient;
  readonly samples: Record<Metric, number[]>;
  session?: LatencySession;
  cwd?: string;
}

const ARGV = ['/usr/bin/true'];

function positiveEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** The columns in a different order each round, so none is always first or last. */
function rotated<T>(items: readonly T[], round: number): T[] {
  const shift = round % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

async function measureConnection(column: Column, record: boolean): Promise<void> {
  const start = process.hrtime.bigint();
  const session = await column.client(column.url);
  const ms = elapsedMs(start);
  session.close();
  if (record) column.samples.connection_ms.push(ms);
}

async function measureIteration(column: Column, id: string, record: boolean): Promise<void> {
  const session = column.session!;
  const cwd = column.cwd!;
  let start = process.hrtime.bigint();
  await session.getMetadata(cwd);
  const metadataMs = elapsedMs(start);

  const completionStart = process.hrtime.bigint();
  start = completionStart;
  const started = await session.start(id, ARGV, cwd);
  const startMs = elapsedMs(start);
  start = process.hrtime.bigint();
  await started.waitClosed();
  const waitMs = elapsedMs(start);
  const completionMs = elapsedMs(completionStart);
  if (!record) return;
  column.samples.fs_get_metadata_ms.push(metadataMs);
  column.samples.process_start_ms.push(startMs);
  column.samples.process_completion_wait_ms.push(waitMs);
  column.samples.process_completion_ms.push(completionMs);
}

function printReport(columns: readonly Column[], iterations: number, warmups: number): void {
  const summaries = columns.map((column) =>
    Object.fromEntries(METRICS.map((metric) => [metric, summarize(column.samples[metric])])),
  ) as Array<Record<Metric, Summary>>;
  const width = 28;
  const cell = 24;
  console.log(
    `exec-server remote latency: ${iterations} iterations after ${warmups} warm-ups, argv ${JSON.stringify(ARGV)}, plain WebSocket on 127.0.0.1`,
  );
  console.log(
    `node ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log('');
  console.log(''.padEnd(width) + columns.map((column) => column.label.padStart(cell)).join(''));
  for (const metric of METRICS) {
    for (const stat of ['min', 'p50', 'p95', 'max', 'mean'] as const) {
      const label = stat === 'min' ? `${metric} ${stat}` : `${''.padEnd(metric.length)} ${stat}`;
      console.log(
        label.padEnd(width) +
          summaries.map((summary) => summary[metric][stat].toFixed(3).padStart(cell)).join(''),
      );
    }
  }
  // Each ratio with a 95% bootstrap interval: how far noise alone may have moved it.
  const [binaryColumn, handwrittenColumn, tsColumn] = columns as [Column, Column, Column];
  const ratioLine = (metric: Metric, ours: Column, theirs: Column): string => {
    const [low, high] = p50RatioInterval(ours.samples[metric], theirs.samples[metric]);
    const p50 = (column: Column): number => summarize(column.samples[metric]).p50;
    return `  ${metric.padEnd(width)}${ratio(p50(ours), p50(theirs))}  [${low.toFixed(2)}, ${high.toFixed(2)}]`;
  };
  console.log('');
  console.log(
    'client overhead, our client / hand-written client (same binary), p50 (target ≤ 1.05x, #17; #12 asks ≤ 1.10x):',
  );
  for (const metric of METRICS) console.log(ratioLine(metric, binaryColumn, handwrittenColumn));
  console.log(
    'executor, our TypeScript executor / codex binary (same client), p50 (target ≤ 1.0x):',
  );
  for (const metric of METRICS) console.log(ratioLine(metric, tsColumn, binaryColumn));
}

function ratio(ours: number, theirs: number): string {
  return `${(ours / theirs).toFixed(2)}x  (${ours.toFixed(3)} / ${theirs.toFixed(3)} ms)`;
}

async function main(): Promise<void> {
  const iterations = positiveEnv('EXEC_SERVER_LATENCY_ITERATIONS', 30);
  const warmups = positiveEnv('EXEC_SERVER_LATENCY_WARMUP_ITERATIONS', 5);
  const servers: RunningExecServer[] = [];
  // Both clients run as tsc-compiled JavaScript, like the built package (see compiledClients).
  const { execrxClient, handwrittenClient } = await compiledLatencyDrivers();
  try {
    const [binary, tsExecutor] = await Promise.all([
      startCodexExecServer(),
      startTsExecutorProcess(),
    ]);
    servers.push(binary, tsExecutor);
    const emptySamples = (): Record<Metric, number[]> =>
      Object.fromEntries(METRICS.map((metric) => [metric, []])) as unknown as Record<
        Metric,
        number[]
      >;
    const columns: Column[] = [
      { label: 'binary+execrx', url: binary.url, client: execrxClient, samples: emptySamples() },
      {
        label: 'binary+handwritten',
        url: binary.url,
        client: handwrittenClient,
        samples: emptySamples(),
      },
      {
        label: 'ts-executor+execrx',
        url: tsExecutor.url,
        client: execrxClient,
        samples: emptySamples(),
      },
    ];

    for (let round = 0; round < warmups + iterations; round++) {
      for (const column of rotated(columns, round))
        await measureConnection(column, round >= warmups);
    }
    for (const column of columns) {
      column.session = await column.client(column.url);
      column.cwd = await column.session.environmentCwd();
    }
    for (let round = 0; round < warmups + iterations; round++) {
      const measured = round >= warmups;
      const id = measured ? `latency-measured-${round - warmups}` : `latency-warmup-${round}`;
      for (const column of rotated(columns, round)) await measureIteration(column, id, measured);
    }
    for (const column of columns) column.session?.close();
    printReport(columns, iterations, warmups);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

await main();
