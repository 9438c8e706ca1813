/**
 * The fast-path rule for the executor's inbound side (DEVELOPERS.md, issue #12): each fast
 * path under `src/server/fastpath/` side by side with its plain twin
 * (`bench/plain/server/fastpath/`), on the figure a user sees.
 *
 * Executors, each `execrx serve` in its own process (bench/support/executors.ts): the shipped
 * build (`fast`), one build per fast path with only that module replaced by its twin
 * (bench/support/plainTwins.ts), and the codex 0.169.0 binary as a column, so the ≤ 1.0x target
 * stays visible. Every round, in a rotating order, each executor gets (after an idle gap each,
 * so each is served cold, as in remote-latency):
 *   - `fs_get_metadata_ms`: one `fs/getMetadata` of its cwd on a warm session
 *   - `connection_ms`: WebSocket open + `initialize` + `initialized`
 *   - `process_completion_ms`: `process/start` of `/usr/bin/true` until `process/closed`
 * all through the compiled hand-written client (the least client time in the figure).
 *
 * Prints, per fast path, its figure: fast p50, plain p50, plain/fast (≥ 1.05 earns the fast
 * path its place), and the binary's p50 with fast/binary and plain/binary.
 *
 * Run: `npx tsx bench/fast-paths-executor.ts [rounds=100] [gapMs=20]`
 */
import { loadavg } from 'node:os';
import { compiledLatencyDrivers } from './support/compiledClients.js';
import {
  startCodexExecServer,
  startTsExecutorProcess,
  type RunningExecServer,
} from './support/executors.js';
import type { LatencyClient, LatencySession } from './support/latencyDrivers.js';
import { variantLabel, type PlainVariant } from './support/plainTwins.js';
import { elapsedMs, p50RatioInterval, summarize } from './support/stats.js';

const WARMUPS = 5;
const FIGURES = ['fs_get_metadata_ms', 'connection_ms', 'process_completion_ms'] as const;
type Figure = (typeof FIGURES)[number];

/** Each fast path of the executor's inbound side, and the figure it has to move. */
const FAST_PATHS: ReadonlyArray<{ module: string; trick: string; figure: Figure }> = [
  {
    module: 'server/fastpath/getMetadataParams',
    trick: 'hand-written params check',
    figure: 'fs_get_metadata_ms',
  },
  {
    module: 'server/fastpath/resultReply',
    trick: 'preformatted JSON reply',
    figure: 'fs_get_metadata_ms',
  },
  { module: 'server/fastpath/warmUp', trick: 'V8 warm-up', figure: 'fs_get_metadata_ms' },
  {
    module: 'server/fastpath/frameText',
    trick: 'frame text decoding',
    figure: 'fs_get_metadata_ms',
  },
  {
    module: 'server/fastpath/keysInText',
    trick: 'keysInText indexOf scan',
    figure: 'fs_get_metadata_ms',
  },
  {
    module: 'server/fastpath/verbatimFileUri',
    trick: 'verbatim file: URIs',
    figure: 'fs_get_metadata_ms',
  },
  {
    module: 'server/fastpath/metadataStat',
    trick: 'synchronous lstat',
    figure: 'fs_get_metadata_ms',
  },
  {
    module: 'server/fastpath/environmentCache',
    trick: 'environment info cache',
    figure: 'connection_ms',
  },
  {
    module: 'server/fastpath/fifoStock',
    trick: 'FIFOs made in batches',
    figure: 'process_completion_ms',
  },
];

interface Column {
  readonly label: string;
  readonly url: string;
  readonly session: LatencySession;
  readonly cwd: string;
  readonly samples: Record<Figure, number[]>;
}

function positiveArg(index: number, fallback: number): number {
  const raw = process.argv[2 + index];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`argument ${index + 1} must be a positive integer`);
  return value;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function measure(
  column: Column,
  client: LatencyClient,
  gapMs: number,
  processId: string,
  record: boolean,
): Promise<void> {
  await pause(gapMs);
  let start = process.hrtime.bigint();
  await column.session.getMetadata(column.cwd);
  const metadataMs = elapsedMs(start);
  await pause(gapMs);
  start = process.hrtime.bigint();
  const session = await client(column.url);
  const connectionMs = elapsedMs(start);
  session.close();
  await pause(gapMs);
  start = process.hrtime.bigint();
  const started = await column.session.start(processId, ['/usr/bin/true'], column.cwd);
  await started.waitClosed();
  const completionMs = elapsedMs(start);
  if (!record) return;
  column.samples.fs_get_metadata_ms.push(metadataMs);
  column.samples.connection_ms.push(connectionMs);
  column.samples.process_completion_ms.push(completionMs);
}

async function main(): Promise<void> {
  const rounds = positiveArg(0, 100);
  const gapMs = positiveArg(1, 20);
  const { handwrittenClient } = await compiledLatencyDrivers();
  const variants: Array<readonly [string, PlainVariant]> = [
    ['fast', []],
    ...FAST_PATHS.map(({ module }) => [variantLabel([module]), [module]] as const),
  ];
  const servers: RunningExecServer[] = [];
  try {
    // One at a time: each build copies the last, and the warm-ups should not overlap.
    const started: Array<readonly [string, RunningExecServer]> = [
      ['binary', await startCodexExecServer()],
    ];
    servers.push(started[0]![1]);
    for (const [label, variant] of variants) {
      const server = await startTsExecutorProcess(variant);
      servers.push(server);
      started.push([label, server]);
    }
    const columns: Column[] = [];
    for (const [label, server] of started) {
      const session = await handwrittenClient(server.url);
      const samples = { fs_get_metadata_ms: [], connection_ms: [], process_completion_ms: [] };
      columns.push({
        label,
        url: server.url,
        session,
        cwd: await session.environmentCwd(),
        samples,
      });
    }
    for (let round = 0; round < WARMUPS + rounds; round += 1) {
      const shift = round % columns.length;
      for (const column of [...columns.slice(shift), ...columns.slice(0, shift)])
        await measure(column, handwrittenClient, gapMs, `fast-paths-${round}`, round >= WARMUPS);
    }
    for (const column of columns) column.session.close();
    report(columns, rounds, gapMs);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

function report(columns: readonly Column[], rounds: number, gapMs: number): void {
  const byLabel = new Map(columns.map((column) => [column.label, column]));
  const binary = byLabel.get('binary')!;
  const fast = byLabel.get('fast')!;
  const p50 = (column: Column, figure: Figure): number => summarize(column.samples[figure]).p50;
  console.log(
    `executor fast paths vs plain twins: ${rounds} rounds, ${gapMs} ms idle before each request; node ${process.version}, load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  );
  console.log('p50 in ms of every executor on every figure:');
  console.log(`  ${'executor'.padEnd(34)}${FIGURES.map((figure) => figure.padStart(24)).join('')}`);
  for (const column of columns) {
    const cells = FIGURES.map((figure) => p50(column, figure).toFixed(3).padStart(24));
    console.log(`  ${column.label.padEnd(34)}${cells.join('')}`);
  }
  console.log('each fast path on its figure (plain/fast ≥ 1.05 earns it its place):');
  for (const { module, trick, figure } of FAST_PATHS) {
    const plain = byLabel.get(variantLabel([module]))!;
    const [low, high] = p50RatioInterval(plain.samples[figure], fast.samples[figure]);
    const gain = p50(plain, figure) / p50(fast, figure);
    console.log(
      `  ${trick.padEnd(28)} ${figure.padEnd(22)} fast ${p50(fast, figure).toFixed(3)}  plain ${p50(plain, figure).toFixed(3)}  plain/fast ${gain.toFixed(3)} [${low.toFixed(3)}, ${high.toFixed(3)}]  binary ${p50(binary, figure).toFixed(3)}  fast/binary ${(p50(fast, figure) / p50(binary, figure)).toFixed(3)}  plain/binary ${(p50(plain, figure) / p50(binary, figure)).toFixed(3)}`,
    );
  }
}

await main();
