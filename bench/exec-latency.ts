/**
 * Warm-session exec latency: one `/usr/bin/true`, from `process/start` sent until its stdout
 * ends at the client (as bench/ssh-comparison.ts's library figure), on one session kept open.
 * Columns, interleaved (the order rotates every round), medians:
 *   - execrx serve (compiled, as a user starts it) + our client (`ExecServerClient`)
 *   - the codex 0.169.0 binary + our client
 *   - execrx serve + the hand-written client (`process/start` → `process/closed`): the client's share
 *   - bare `child_process.spawn('/usr/bin/true')` in this process until `close`: what Node's
 *     spawn alone costs here, the floor of any Node executor
 *
 * Options (environment):
 *   - EXEC_LATENCY_STREAM_MIB=N: each executor first streams N MiB of stdout to our client, as
 *     a session that ran a build or a log dump has (an executor's memory grows with it, and
 *     a fork copies its page tables: what src/server/spawner.ts avoids)
 *   - EXECRX_BENCH_BASE=/path/to/other/checkout (built): one more column, that checkout's
 *     `execrx serve` with our client (a before/after pair)
 *
 * Run: `npx tsx bench/exec-latency.ts [rounds=60] [gapMs=20]`
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { firstValueFrom, switchMap } from 'rxjs';
import { ExecServerClient } from '../src/client/index.js';
import { connectWebSocket } from '../src/transport/webSocketTransport.js';
import { compiledLatencyDrivers } from './support/compiledClients.js';
import {
  startCodexExecServer,
  startExecutorFromBin,
  startTsExecutorProcess,
  type RunningExecServer,
} from './support/executors.js';
import { positiveArg } from './support/args.js';
import { elapsedMs, summarize } from './support/stats.js';

const WARMUPS = 5;
const ARGV = ['/usr/bin/true'];

async function connect(url: string): Promise<ExecServerClient> {
  return firstValueFrom(
    connectWebSocket(url).pipe(
      switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'bench' })),
    ),
  );
}

/** `true` through our client: start, then stdout to its end. */
async function execrxTrue(client: ExecServerClient): Promise<void> {
  const handle = await firstValueFrom(client.startProcess({ argv: ARGV, cwd: '/' }));
  await new Promise<void>((resolve, reject) =>
    handle.stdout$.subscribe({ error: reject, complete: resolve }),
  );
}

/** Streams `mib` MiB of stdout through the session (counted, not kept). */
async function streamOutput(client: ExecServerClient, mib: number): Promise<void> {
  const handle = await firstValueFrom(
    client.startProcess({ argv: ['head', '-c', String(mib * 1024 * 1024), '/dev/zero'], cwd: '/' }),
  );
  await new Promise<void>((resolve, reject) =>
    handle.stdout$.subscribe({ error: reject, complete: resolve }),
  );
}

function bareSpawn(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(ARGV[0] as string, [], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.once('error', reject);
    child.once('close', () => resolve());
  });
}

interface Column {
  readonly label: string;
  readonly run: () => Promise<void>;
  readonly samples: number[];
}

async function main(): Promise<void> {
  const rounds = positiveArg(0, 60);
  const gapMs = positiveArg(1, 20);
  const streamMib = Number(process.env.EXEC_LATENCY_STREAM_MIB ?? 0);
  const base = process.env.EXECRX_BENCH_BASE;
  const servers: RunningExecServer[] = [];
  try {
    const [binary, ours, drivers] = await Promise.all([
      startCodexExecServer(),
      startTsExecutorProcess(),
      compiledLatencyDrivers(),
    ]);
    servers.push(binary, ours);
    const oursClient = await connect(ours.url);
    const binaryClient = await connect(binary.url);
    const handwritten = await drivers.handwrittenClient(ours.url);
    const binaryHandwritten = await drivers.handwrittenClient(binary.url);
    const baseServer = base ? await startExecutorFromBin(`${base}/bin/execrx.js`) : undefined;
    if (baseServer) servers.push(baseServer);
    const baseClient = baseServer ? await connect(baseServer.url) : undefined;
    if (streamMib > 0) {
      for (const client of [oursClient, binaryClient, baseClient]) {
        if (client) await streamOutput(client, streamMib);
      }
    }
    let nextId = 0;
    const handwrittenTrue = (session: typeof handwritten) => async () => {
      nextId += 1;
      const started = await session.start(`bench-${nextId}`, ARGV, '/');
      await started.waitClosed();
    };
    const columns: Column[] = [
      { label: 'execrx serve, our client', run: () => execrxTrue(oursClient), samples: [] },
      { label: 'codex binary, our client', run: () => execrxTrue(binaryClient), samples: [] },
      { label: 'execrx serve, hand-written', run: handwrittenTrue(handwritten), samples: [] },
      { label: 'codex binary, hand-written', run: handwrittenTrue(binaryHandwritten), samples: [] },
      { label: 'bare spawn (this process)', run: bareSpawn, samples: [] },
      ...(baseClient
        ? [
            {
              label: 'base execrx serve, our client',
              run: () => execrxTrue(baseClient),
              samples: [],
            },
          ]
        : []),
    ];
    for (let round = 0; round < WARMUPS + rounds; round += 1) {
      const shift = round % columns.length;
      for (const column of [...columns.slice(shift), ...columns.slice(0, shift)]) {
        await new Promise((resolve) => setTimeout(resolve, gapMs));
        const start = process.hrtime.bigint();
        await column.run();
        if (round >= WARMUPS) column.samples.push(elapsedMs(start));
      }
    }
    oursClient.close();
    binaryClient.close();
    handwritten.close();
    binaryHandwritten.close();
    baseClient?.close();
    console.log(
      `exec /usr/bin/true on a warm session${streamMib > 0 ? ` that streamed ${streamMib} MiB first` : ''}, ${rounds} rounds after ${gapMs} ms idle each; node ${process.version}, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}`,
    );
    for (const { label, samples } of columns) {
      const { p50, p95 } = summarize(samples);
      console.log(`  ${label.padEnd(28)} p50 ${p50.toFixed(2)} ms  p95 ${p95.toFixed(2)} ms`);
    }
    const p50 = (index: number): number => summarize(columns[index]!.samples).p50;
    console.log(`ratio execrx/binary (our client) p50: ${(p50(0) / p50(1)).toFixed(2)}x`);
    console.log(`ratio execrx/binary (hand-written) p50: ${(p50(2) / p50(3)).toFixed(2)}x`);
    console.log(`ratio execrx (our client)/bare spawn p50: ${(p50(0) / p50(4)).toFixed(2)}x`);
    if (baseClient)
      console.log(`ratio execrx/base (our client) p50: ${(p50(0) / p50(5)).toFixed(2)}x`);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

await main();
