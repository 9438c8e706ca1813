/**
 * The fast-path rule (DEVELOPERS.md, issue #12 item 4) for the plain output path: each trick on
 * the way from a child's stdout to `execrx run --url`'s stdout, against its plain twin, on the
 * figure a user sees — MB/s of `execrx run --url ws://… -- head -c N /dev/zero` piped into a
 * byte counter — plus the CLI's CPU seconds for that command.
 *
 * Each trick gets a package copy with its plain twin swapped in (bench/support/plainTwins.ts).
 * A client-side trick runs the plain CLI against the shipped executor; an executor-side trick
 * runs the shipped CLI against an executor built with the twin. Fast and plain alternate
 * (fast, plain, fast, plain, …); medians and the ratio fast/plain are printed. A trick stays
 * only when it shows >= 5% (ratio >= 1.05 on MB/s).
 *
 * Run: `npx tsx bench/fast-paths-output.ts` (BENCH_MIB=64 MiB per command, BENCH_SAMPLES=6
 * per side, FAST_PATHS=name,name to pick tricks). Needs /usr/bin/time for the CPU figure.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { packageBin, startTsExecutorProcess } from './support/executors.js';
import type { PlainVariant } from './support/plainTwins.js';
import { summarize } from './support/stats.js';

const MIB = Number(process.env.BENCH_MIB ?? 64);
const BYTES = MIB * 1024 * 1024;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 6);

interface Trick {
  readonly name: string;
  /** Its module under `src/`, without extension (its twin is `bench/plain/<module>.ts`). */
  readonly module: string;
  /** Which process the trick runs in. */
  readonly side: 'client' | 'executor';
}

const TRICKS: readonly Trick[] = [
  { name: 'outputNotification', module: 'client/fastpath/outputNotification', side: 'client' },
  { name: 'notificationText', module: 'server/fastpath/notificationText', side: 'executor' },
  { name: 'frameSlabs', module: 'server/fastpath/frameSlabs', side: 'executor' },
];

interface Sample {
  readonly mbPerSecond: number;
  readonly cliCpuSeconds: number;
}

/** One `execrx run --url` of `head -c BYTES /dev/zero`, stdout counted here. */
async function runOnce(bin: string, url: string, index: number): Promise<Sample> {
  const timeFile = `${tmpdir()}/fast-paths-output-${process.pid}-${index}.time`;
  const start = performance.now();
  const child = spawn(
    '/usr/bin/time',
    ['-f', '%U %S', '-o', timeFile, process.execPath, bin, 'run', '--url', url, '--'].concat([
      'head',
      '-c',
      String(BYTES),
      '/dev/zero',
    ]),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let bytes = 0;
  child.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const seconds = (performance.now() - start) / 1000;
  if (code !== 0 || bytes !== BYTES) throw new Error(`run exited ${code} after ${bytes} bytes`);
  const [user, system] = (await readFile(timeFile, 'utf8')).trim().split(/\s+/).map(Number);
  await rm(timeFile, { force: true });
  return { mbPerSecond: BYTES / 1e6 / seconds, cliCpuSeconds: (user ?? 0) + (system ?? 0) };
}

async function measure(trick: Trick): Promise<void> {
  const plain: PlainVariant = [trick.module];
  const fastBin = await packageBin();
  const plainBin = await packageBin(plain);
  const fastServer = await startTsExecutorProcess();
  const plainServer = trick.side === 'executor' ? await startTsExecutorProcess(plain) : fastServer;
  const sides = {
    fast: { bin: fastBin, url: fastServer.url, samples: [] as Sample[] },
    plain: {
      bin: trick.side === 'client' ? plainBin : fastBin,
      url: plainServer.url,
      samples: [] as Sample[],
    },
  };
  try {
    await runOnce(fastBin, fastServer.url, 0); // warm the page cache and the executor
    for (let round = 0; round < SAMPLES; round += 1) {
      for (const side of round % 2 === 0 ? [sides.fast, sides.plain] : [sides.plain, sides.fast]) {
        side.samples.push(await runOnce(side.bin, side.url, round));
      }
    }
  } finally {
    await fastServer.stop();
    if (plainServer !== fastServer) await plainServer.stop();
  }
  const median = (samples: Sample[], key: keyof Sample) =>
    summarize(samples.map((sample) => sample[key])).p50;
  const fastMb = median(sides.fast.samples, 'mbPerSecond');
  const plainMb = median(sides.plain.samples, 'mbPerSecond');
  const fastCpu = median(sides.fast.samples, 'cliCpuSeconds');
  const plainCpu = median(sides.plain.samples, 'cliCpuSeconds');
  console.log(
    `${trick.name.padEnd(22)} ${trick.side.padEnd(8)} ` +
      `MB/s fast ${fastMb.toFixed(1)} plain ${plainMb.toFixed(1)} (${(fastMb / plainMb).toFixed(2)}x)  ` +
      `CLI cpu s fast ${fastCpu.toFixed(2)} plain ${plainCpu.toFixed(2)} (${(plainCpu / fastCpu).toFixed(2)}x less)`,
  );
}

async function main(): Promise<void> {
  const chosen = (process.env.FAST_PATHS ?? '').split(',').filter(Boolean);
  const tricks = chosen.length === 0 ? TRICKS : TRICKS.filter((t) => chosen.includes(t.name));
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  console.log(
    `# execrx run --url … -- head -c ${MIB}MiB /dev/zero | counter; ${SAMPLES} interleaved samples a side, medians; load ${load}`,
  );
  for (const trick of tricks) await measure(trick);
}

await main();
