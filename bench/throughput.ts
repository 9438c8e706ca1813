/**
 * Output throughput: 64 MiB of stdout (`head -c 67108864 /dev/zero`) delivered to a
 * `stdout$` subscriber of our client, against our TypeScript executor (own process) and the
 * codex 0.169.0 binary, both over plain WebSocket on 127.0.0.1. Runs alternate between the
 * two executors (`THROUGHPUT_RUNS` each, default 3, after one warm-up each); the best and
 * median MB/s are reported, and the ratio ours/binary (target ≥ 1.0x).
 *
 * Run: `npx tsx bench/throughput.ts`
 */
import { loadavg } from 'node:os';
import { firstValueFrom, switchMap } from 'rxjs';
import { ExecServerClient } from '../src/client/index.js';
import { connectWebSocket } from '../src/transport/webSocketTransport.js';
import {
  startCodexExecServer,
  startTsExecutorProcess,
  type RunningExecServer,
} from './support/executors.js';
import { elapsedMs } from './support/stats.js';

const TOTAL_BYTES = 64 * 1024 * 1024;
const ARGV = ['head', '-c', String(TOTAL_BYTES), '/dev/zero'];

interface Target {
  readonly label: string;
  readonly client: ExecServerClient;
  readonly mbPerSecond: number[];
}

/** One run: start the process, count stdout bytes until the stream completes. */
async function measure(client: ExecServerClient): Promise<number> {
  const start = process.hrtime.bigint();
  const handle = await firstValueFrom(
    client.startProcess({ argv: ARGV, cwd: '/', env: { PATH: '/usr/bin:/bin' } }),
  );
  let received = 0;
  await new Promise<void>((resolve, reject) =>
    handle.stdout$.subscribe({
      next: (chunk) => (received += chunk.byteLength),
      error: reject,
      complete: resolve,
    }),
  );
  if (received !== TOTAL_BYTES) throw new Error(`received ${received} of ${TOTAL_BYTES} bytes`);
  const seconds = elapsedMs(start) / 1000;
  return TOTAL_BYTES / 1e6 / seconds;
}

async function connect(url: string): Promise<ExecServerClient> {
  return firstValueFrom(
    connectWebSocket(url).pipe(
      switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'bench' })),
    ),
  );
}

async function main(): Promise<void> {
  const runs = Number(process.env.THROUGHPUT_RUNS ?? 3);
  const servers: RunningExecServer[] = [];
  try {
    const [tsExecutor, binary] = await Promise.all([
      startTsExecutorProcess(),
      startCodexExecServer(),
    ]);
    servers.push(tsExecutor, binary);
    const targets: Target[] = [
      { label: 'ts-executor', client: await connect(tsExecutor.url), mbPerSecond: [] },
      { label: 'codex binary', client: await connect(binary.url), mbPerSecond: [] },
    ];
    for (const target of targets) await measure(target.client); // warm-up
    for (let run = 0; run < runs; run++) {
      const order = run % 2 === 0 ? targets : [...targets].reverse();
      for (const target of order) target.mbPerSecond.push(await measure(target.client));
    }
    for (const target of targets) target.client.close();
    report(targets, runs);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

function report(targets: readonly Target[], runs: number): void {
  console.log(
    `stdout throughput: ${TOTAL_BYTES / 1024 / 1024} MiB of \`${ARGV.join(' ')}\` to a stdout$ subscriber, our client, plain WebSocket on 127.0.0.1, ${runs} runs each`,
  );
  console.log(
    `node ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const stats = targets.map((target) => {
    const sorted = [...target.mbPerSecond].sort((a, b) => a - b);
    return {
      label: target.label,
      best: sorted[sorted.length - 1] as number,
      median: sorted[Math.floor((sorted.length - 1) / 2)] as number,
      runs: target.mbPerSecond,
    };
  });
  for (const stat of stats) {
    console.log(
      `  ${stat.label.padEnd(14)} best ${stat.best.toFixed(1).padStart(7)} MB/s  median ${stat.median.toFixed(1).padStart(7)} MB/s  runs ${stat.runs.map((v) => v.toFixed(1)).join(', ')}`,
    );
  }
  const [ours, binary] = stats as [(typeof stats)[0], (typeof stats)[0]];
  console.log(
    `ratio ours/binary: best ${(ours.best / binary.best).toFixed(2)}x  median ${(ours.median / binary.median).toFixed(2)}x  (target ≥ 1.0x)`,
  );
}

await main();
