/**
 * Stdin throughput through the CLI, the figure a user sees for `process/write`: MB/s of
 * `head -c N /dev/zero | execrx run --url ws://… -- sh -c 'head -c N >/dev/null'`, with the CLI's
 * CPU seconds and the executor's (from `/proc/<pid>/stat`; the CLI is the bottleneck, so on a
 * loaded machine the executor's CPU shows a change on its side more steadily than MB/s). Pairs, each run interleaved (A B A B …), medians:
 *   - requestText (client trick): the shipped CLI / one with its plain twin, shipped executor;
 *   - processWriteText, processWriteFrame (executor tricks): the shipped executor / one with
 *     its plain twin;
 *   - binary: the shipped executor / `codex exec-server`, both with the shipped CLI;
 *   - main (with EXECRX_BENCH_BASE=/path/to/other/checkout): this checkout's CLI and executor /
 *     that checkout's built `bin/execrx.js` for both.
 * A trick stays only when it shows >= 5% (fast/plain >= 1.05 on MB/s).
 *
 * Run: `npx tsx bench/fast-paths-stdin.ts` (BENCH_MIB=256 per command, BENCH_SAMPLES=4 a side,
 * PAIRS=requestText,processWriteText,processWriteFrame,binary,main to pick pairs). Needs /usr/bin/time.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { startCodexExecServer } from '../spec/support/codexExecServer.js';
import { packageBin, startExecutorFromBin } from './support/executors.js';
import { summarize } from './support/stats.js';

const MIB = Number(process.env.BENCH_MIB ?? 256);
const BYTES = MIB * 1024 * 1024;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 4);

/** Each trick's module under `src/` (its twin is `bench/plain/<module>.ts`). */
const TRICKS: Record<string, string> = {
  requestText: 'rpc/fastpath/requestText',
  processWriteText: 'server/fastpath/processWriteText',
  processWriteFrame: 'server/fastpath/processWriteFrame',
};

interface Executor {
  readonly url: string;
  readonly pid?: number;
  stop(): Promise<void>;
}

interface Side {
  readonly label: string;
  readonly bin: string;
  readonly executor: Executor;
  readonly samples: Sample[];
}

interface Sample {
  readonly mbPerSecond: number;
  readonly cliCpuSeconds: number;
  /** NaN when the executor's pid is unknown. */
  readonly executorCpuSeconds: number;
}

/** User plus system CPU seconds of process `pid` so far (NaN when unknown). */
async function cpuSeconds(pid: number | undefined): Promise<number> {
  if (pid === undefined) return NaN;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, fields 14 and 15 of the line (11 and 12 after the command), in clock ticks.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * One `head -c BYTES /dev/zero | execrx run --url … -- sh -c 'head -c BYTES >/dev/null'`: the
 * remote `head` discards what it reads, so only stdin crosses the connection (as in
 * bench/ssh-comparison.ts).
 */
async function runOnce(side: Side, index: number): Promise<Sample> {
  const timeFile = `${tmpdir()}/fast-paths-stdin-${process.pid}-${index}.time`;
  const command =
    `head -c ${BYTES} /dev/zero | /usr/bin/time -f '%U %S' -o ${timeFile} ` +
    `${process.execPath} ${side.bin} run --url ${side.executor.url} -- ` +
    `sh -c 'head -c ${BYTES} >/dev/null'`;
  const executorCpuBefore = await cpuSeconds(side.executor.pid);
  const start = performance.now();
  const child = spawn('/bin/sh', ['-c', command], { stdio: ['ignore', 'ignore', 'inherit'] });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const seconds = (performance.now() - start) / 1000;
  if (code !== 0) throw new Error(`${side.label}: run exited ${code}`);
  const executorCpuSeconds = (await cpuSeconds(side.executor.pid)) - executorCpuBefore;
  const [user, system] = (await readFile(timeFile, 'utf8')).trim().split(/\s+/).map(Number);
  await rm(timeFile, { force: true });
  return {
    mbPerSecond: BYTES / 1e6 / seconds,
    cliCpuSeconds: (user ?? 0) + (system ?? 0),
    executorCpuSeconds,
  };
}

async function compare(name: string, a: Side, b: Side): Promise<void> {
  await runOnce(a, 0); // warm both executors
  await runOnce(b, 0);
  for (let round = 0; round < SAMPLES; round += 1) {
    for (const side of round % 2 === 0 ? [a, b] : [b, a])
      side.samples.push(await runOnce(side, round + 1));
  }
  const median = (side: Side, key: keyof Sample) =>
    summarize(side.samples.map((sample) => sample[key])).p50;
  const rates = (side: Side) => side.samples.map((s) => s.mbPerSecond.toFixed(1)).join(' ');
  console.log(
    `${name.padEnd(18)} MB/s ${a.label} ${median(a, 'mbPerSecond').toFixed(1)} [${rates(a)}] ` +
      `${b.label} ${median(b, 'mbPerSecond').toFixed(1)} [${rates(b)}] ` +
      `${a.label}/${b.label} ${(median(a, 'mbPerSecond') / median(b, 'mbPerSecond')).toFixed(3)}  ` +
      `CLI CPU s ${median(a, 'cliCpuSeconds').toFixed(2)} / ${median(b, 'cliCpuSeconds').toFixed(2)}  ` +
      `executor CPU s ${median(a, 'executorCpuSeconds').toFixed(2)} / ${median(b, 'executorCpuSeconds').toFixed(2)}`,
  );
}

async function main(): Promise<void> {
  const pairs = (process.env.PAIRS ?? 'requestText,processWriteText,processWriteFrame,binary,main')
    .split(',')
    .filter(Boolean);
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  console.log(
    `# head -c ${MIB}MiB /dev/zero | execrx run --url … -- sh -c 'head -c ${MIB}MiB >/dev/null'; ` +
      `${SAMPLES} interleaved samples a side, medians; load ${load}`,
  );
  const fastBin = await packageBin();
  const executors: Executor[] = [];
  const start = async (make: () => Promise<Executor>) => {
    const executor = await make();
    executors.push(executor);
    return executor;
  };
  const side = (label: string, bin: string, executor: Executor): Side => ({
    label,
    bin,
    executor,
    samples: [],
  });
  try {
    const fast = await start(() => startExecutorFromBin(fastBin));
    for (const pair of pairs) {
      const module = TRICKS[pair];
      if (module !== undefined) {
        const plainBin = await packageBin([module]);
        const onClient = pair === 'requestText';
        const plain = onClient ? fast : await start(() => startExecutorFromBin(plainBin));
        await compare(
          pair,
          side('fast', fastBin, fast),
          side('plain', onClient ? plainBin : fastBin, plain),
        );
      } else if (pair === 'binary') {
        const binary = await start(() => startCodexExecServer());
        await compare(pair, side('ours', fastBin, fast), side('binary', fastBin, binary));
      } else if (pair === 'main' && process.env.EXECRX_BENCH_BASE) {
        const baseBin = `${process.env.EXECRX_BENCH_BASE}/bin/execrx.js`;
        const base = await start(() => startExecutorFromBin(baseBin));
        await compare(pair, side('this', fastBin, fast), side('base', baseBin, base));
      }
    }
  } finally {
    for (const executor of executors) await executor.stop();
  }
}

await main();
