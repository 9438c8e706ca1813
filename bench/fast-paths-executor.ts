/**
 * The fast-path rule for the executor's inbound side (DEVELOPERS.md, issue #12): each fast
 * path under `src/server/fastpath/` side by side with its plain twin
 * (`bench/plain/server/fastpath/`), on the figure a user sees.
 *
 * Executors, each `execrx serve` in its own process (bench/support/executors.ts): the shipped
 * build (`fast`), one build per fast path with only that module replaced by its twin
 * (bench/support/plainTwins.ts), one with the four tricks of a cold small request's path
 * replaced together, and the codex 0.169.0 binary as a column, so the ≤ 1.0x target stays
 * visible. Every round, in a rotating order, each executor gets (after an idle gap each,
 * so each is served cold, as in remote-latency):
 *   - `fs_get_metadata_ms`: one `fs/getMetadata` of its cwd on a warm session
 *   - `connection_ms`: WebSocket open + `initialize` + `initialized`
 *   - `process_completion_ms`: `process/start` of `/usr/bin/true` until `process/closed`
 * all through the compiled hand-written client (the least client time in the figure).
 *
 * Then, for the fast paths whose cost grows with the message (keysInText, nativeUnmask, processWriteText),
 * a second figure:
 *   - `stdin_mb_s`: 16 MiB written to `head -c 16777216 >/dev/null` in 1 MiB `process/write`s (four in
 *     flight) through our client (`ExecServerClient`), median MB/s over `stdinRounds`
 *
 * Prints, per fast path, its figure: fast p50, plain p50, plain/fast (≥ 1.05 earns the fast
 * path its place; for MB/s fast/plain), and the binary's with fast/binary and plain/binary.
 *
 * Run: `npx tsx bench/fast-paths-executor.ts [rounds=100] [gapMs=20] [stdinRounds=8]`
 * (`FAST_PATHS=warmUp,fifoStock` measures only the fast paths whose modules have those names).
 */
import { loadavg } from 'node:os';
import { firstValueFrom, switchMap } from 'rxjs';
import { ExecServerClient } from '../src/client/index.js';
import { connectWebSocket } from '../src/transport/webSocketTransport.js';
import { compiledLatencyDrivers } from './support/compiledClients.js';
import {
  startCodexExecServer,
  startTsExecutorProcess,
  type RunningExecServer,
} from './support/executors.js';
import type { LatencyClient, LatencySession } from './support/latencyDrivers.js';
import { variantLabel, type PlainVariant } from './support/plainTwins.js';
import { positiveArg } from './support/args.js';
import { elapsedMs, p50RatioInterval, summarize } from './support/stats.js';

const WARMUPS = 5;
const FIGURES = ['fs_get_metadata_ms', 'connection_ms', 'process_completion_ms'] as const;
type Figure = (typeof FIGURES)[number];

/** Each fast path of the executor's inbound side, and the figure it has to move. */
const ALL_FAST_PATHS: ReadonlyArray<{ modules: string[]; trick: string; figure: Figure }> = [
  { modules: ['server/fastpath/warmUp'], trick: 'V8 warm-up', figure: 'fs_get_metadata_ms' },
  {
    modules: ['server/fastpath/keysInText'],
    trick: 'keysInText indexOf scan',
    figure: 'fs_get_metadata_ms',
  },
  {
    modules: ['server/fastpath/processWriteText'],
    trick: 'process/write sliced',
    figure: 'fs_get_metadata_ms',
  },
  {
    modules: ['server/fastpath/metadataStat'],
    trick: 'synchronous lstat',
    figure: 'fs_get_metadata_ms',
  },
  {
    modules: ['server/fastpath/environmentCache'],
    trick: 'environment info cache',
    figure: 'connection_ms',
  },
  {
    modules: ['server/fastpath/fifoStock'],
    trick: 'FIFOs made in batches',
    figure: 'process_completion_ms',
  },
  {
    modules: ['server/fastpath/getMetadataParams'],
    trick: 'hand-written params check',
    figure: 'fs_get_metadata_ms',
  },
  {
    modules: ['server/fastpath/resultReply'],
    trick: 'preformatted JSON reply',
    figure: 'fs_get_metadata_ms',
  },
  {
    modules: ['server/fastpath/frameText'],
    trick: 'frame text decoding',
    figure: 'fs_get_metadata_ms',
  },
  {
    modules: ['server/fastpath/verbatimFileUri'],
    trick: 'verbatim file: URIs',
    figure: 'fs_get_metadata_ms',
  },
  {
    modules: ['server/fastpath/nativeUnmask'],
    trick: 'frames unmasked by bufferutil (its figure is stdin_mb_s)',
    figure: 'fs_get_metadata_ms',
  },
  // The last four each sit within the noise alone; together they are a cold request's path.
  {
    modules: [
      'server/fastpath/getMetadataParams',
      'server/fastpath/resultReply',
      'server/fastpath/frameText',
      'server/fastpath/verbatimFileUri',
    ],
    trick: 'those four together',
    figure: 'fs_get_metadata_ms',
  },
];

const CHOSEN = (process.env.FAST_PATHS ?? '').split(',').filter(Boolean);
const chosen = (module: string): boolean =>
  CHOSEN.length === 0 || CHOSEN.includes(module.split('/').pop()!);
const FAST_PATHS = ALL_FAST_PATHS.filter(({ modules }) => modules.every(chosen));

/** Fast paths whose cost grows with the message, measured on stdin throughput too. */
const STDIN_FAST_PATHS: ReadonlyArray<{ module: string; trick: string }> = [
  { module: 'server/fastpath/keysInText', trick: 'keysInText indexOf scan' },
  { module: 'server/fastpath/nativeUnmask', trick: 'frames unmasked by bufferutil' },
  { module: 'server/fastpath/processWriteText', trick: 'process/write sliced' },
].filter(({ module }) => chosen(module));
const STDIN_BYTES = 16 * 1024 * 1024;
const STDIN_PIECE = Buffer.alloc(1024 * 1024, 0x61);

interface Column {
  readonly label: string;
  readonly url: string;
  readonly session: LatencySession;
  readonly cwd: string;
  readonly samples: Record<Figure, number[]>;
}

/** MB/s of `STDIN_BYTES` written to `head -c … >/dev/null` through our client. */
async function stdinMbPerSecond(client: ExecServerClient): Promise<number> {
  const start = process.hrtime.bigint();
  const handle = await firstValueFrom(
    client.startProcess({
      argv: ['/bin/sh', '-c', `head -c ${STDIN_BYTES} >/dev/null`],
      cwd: '/',
      pipeStdin: true,
    }),
  );
  const closed = new Promise<void>((resolve, reject) =>
    handle.events$.subscribe({ error: reject, complete: resolve }),
  );
  const inFlight: Promise<void>[] = [];
  for (let left = STDIN_BYTES; left > 0; left -= STDIN_PIECE.length) {
    inFlight.push(firstValueFrom(handle.write(STDIN_PIECE)).then(() => undefined));
    if (inFlight.length >= 4) await inFlight.shift();
  }
  await Promise.all(inFlight);
  await closed;
  return STDIN_BYTES / 1e6 / (elapsedMs(start) / 1000);
}

async function connectClient(url: string): Promise<ExecServerClient> {
  return firstValueFrom(
    connectWebSocket(url).pipe(
      switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'bench' })),
    ),
  );
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
  const stdinRounds = positiveArg(2, 8);
  const { handwrittenClient } = await compiledLatencyDrivers();
  const variants: Array<readonly [string, PlainVariant]> = [
    ['fast', []],
    ...FAST_PATHS.map(({ modules }) => [variantLabel(modules), modules] as const),
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
    if (STDIN_FAST_PATHS.length > 0) await reportStdin(columns, stdinRounds);
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
  console.log(`  ${'executor'.padEnd(72)}${FIGURES.map((figure) => figure.padStart(24)).join('')}`);
  for (const column of columns) {
    const cells = FIGURES.map((figure) => p50(column, figure).toFixed(3).padStart(24));
    console.log(`  ${column.label.padEnd(72)}${cells.join('')}`);
  }
  console.log('each fast path on its figure (plain/fast ≥ 1.05 earns it its place):');
  for (const { modules, trick, figure } of FAST_PATHS) {
    const plain = byLabel.get(variantLabel(modules))!;
    const [low, high] = p50RatioInterval(plain.samples[figure], fast.samples[figure]);
    const gain = p50(plain, figure) / p50(fast, figure);
    console.log(
      `  ${trick.padEnd(28)} ${figure.padEnd(22)} fast ${p50(fast, figure).toFixed(3)}  plain ${p50(plain, figure).toFixed(3)}  plain/fast ${gain.toFixed(3)} [${low.toFixed(3)}, ${high.toFixed(3)}]  binary ${p50(binary, figure).toFixed(3)}  fast/binary ${(p50(fast, figure) / p50(binary, figure)).toFixed(3)}  plain/binary ${(p50(plain, figure) / p50(binary, figure)).toFixed(3)}`,
    );
  }
}

async function reportStdin(columns: readonly Column[], rounds: number): Promise<void> {
  const labels = [
    'binary',
    'fast',
    ...STDIN_FAST_PATHS.map(({ module }) => variantLabel([module])),
  ];
  const measured = await Promise.all(
    labels.map(async (label) => {
      const column = columns.find((candidate) => candidate.label === label)!;
      return { label, client: await connectClient(column.url), rates: [] as number[] };
    }),
  );
  for (let round = 0; round < 1 + rounds; round += 1) {
    const shift = round % measured.length;
    for (const entry of [...measured.slice(shift), ...measured.slice(0, shift)]) {
      const rate = await stdinMbPerSecond(entry.client);
      if (round > 0) entry.rates.push(rate);
    }
  }
  for (const entry of measured) entry.client.close();
  const median = (label: string): number => {
    const sorted = [...measured.find((entry) => entry.label === label)!.rates].sort(
      (a, b) => a - b,
    );
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  console.log(
    `stdin_mb_s, ${rounds} rounds of 16 MiB each (median MB/s; fast/plain ≥ 1.05 earns the fast path its place):`,
  );
  for (const { module, trick } of STDIN_FAST_PATHS) {
    const fast = median('fast');
    const plain = median(variantLabel([module]));
    const binary = median('binary');
    console.log(
      `  ${trick.padEnd(28)} ${'stdin_mb_s'.padEnd(22)} fast ${fast.toFixed(1)}  plain ${plain.toFixed(1)}  fast/plain ${(fast / plain).toFixed(3)}  binary ${binary.toFixed(1)}  fast/binary ${(fast / binary).toFixed(3)}  plain/binary ${(plain / binary).toFixed(3)}`,
    );
  }
}

await main();
