/**
 * The fast-path rule (DEVELOPERS.md, issue #12 item 4) for the plain output path: each trick on
 * the way from a child's stdout to `execrx run --url`'s stdout, against its plain twin, on the
 * figure a user sees — MB/s of `execrx run --url ws://… -- head -c N /dev/zero` piped into a
 * byte counter — plus the CLI's CPU seconds for that command.
 *
 * Each trick gets a package copy with its plain twin swapped in (bench/support/plainTwins.ts).
 * A client-side trick runs the plain CLI against the shipped executor; an executor-side trick
 * runs the shipped CLI against an executor built with the twin. Beside MB/s it prints the CPU
 * seconds of the process the trick runs in (less shaken by a loaded host than wall time). Fast and plain alternate
 * (fast, plain, fast, plain, …); medians and the ratio fast/plain are printed. A trick stays
 * only when it shows >= 5% (ratio >= 1.05 on MB/s).
 *
 * A trick on the reply path rather than the output path (`smallTextFrame`: short replies
 * framed as one Latin-1 string) is measured on what it can change: `fs/getMetadata` p50 of
 * a warm session (the hand-written client of bench/support/latencyDrivers.ts, so the client's
 * own cost does not hide the executor's), blocks of calls alternating between the shipped
 * executor and the one built with the twin.
 *
 * Run: `npx tsx bench/fast-paths-output.ts` (BENCH_MIB=64 MiB per command, BENCH_SAMPLES=6
 * per side, BENCH_CALLS=2000 calls per side for latency, FAST_PATHS=name,name to pick tricks).
 * Needs /usr/bin/time for the CPU figure.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { packageBin, startExecutorFromBin, startTsExecutorProcess } from './support/executors.js';
import { handwrittenClient } from './support/latencyDrivers.js';
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
  /** The figure: output MB/s through the CLI (default), or a warm `fs/getMetadata` p50. */
  readonly figure?: 'throughput' | 'latency';
}

const TRICKS: readonly Trick[] = [
  { name: 'outputNotification', module: 'client/fastpath/outputNotification', side: 'client' },
  { name: 'outputText', module: 'rpc/fastpath/outputNotification', side: 'client' },
  { name: 'notificationText', module: 'server/fastpath/notificationText', side: 'executor' },
  { name: 'backpressure', module: 'server/backpressure', side: 'executor' },
  { name: 'retainedOutput', module: 'server/retainedOutput', side: 'executor' },
  {
    name: 'smallTextFrame',
    module: 'server/fastpath/smallTextFrame',
    side: 'executor',
    figure: 'latency',
  },
];

interface Sample {
  readonly mbPerSecond: number;
  readonly cliCpuSeconds: number;
  readonly executorCpuSeconds: number;
}

interface Executor {
  readonly url: string;
  /** CPU seconds the executor process has used so far. */
  cpuSeconds(): Promise<number>;
  stop(): Promise<void>;
}

/** `execrx serve` from `bin`, with its CPU time read from /proc by its port's owner. */
async function startExecutor(bin: string): Promise<Executor> {
  const server = await startExecutorFromBin(bin);
  const pid = await pidListeningOn(Number(new URL(server.url).port));
  return {
    url: server.url,
    cpuSeconds: async () => {
      const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks
    },
    stop: server.stop,
  };
}

/** The pid of the process listening on 127.0.0.1:`port` (Linux /proc). */
async function pidListeningOn(port: number): Promise<number> {
  const { readdir, readlink } = await import('node:fs/promises');
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const table = await readFile('/proc/net/tcp', 'utf8');
  const row = table.split('\n').find((line) => line.includes(`:${hexPort} 00000000:0000 0A`));
  const inode = row?.trim().split(/\s+/)[9];
  if (inode === undefined) throw new Error(`no listener on port ${port}`);
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
      if (target === `socket:[${inode}]`) return Number(entry);
    }
  }
  throw new Error(`no process owns the listener on port ${port}`);
}

/** One `execrx run --url` of `head -c BYTES /dev/zero`, stdout counted here. */
async function runOnce(bin: string, executor: Executor, index: number): Promise<Sample> {
  const url = executor.url;
  const executorCpuBefore = await executor.cpuSeconds();
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
  return {
    mbPerSecond: BYTES / 1e6 / seconds,
    cliCpuSeconds: (user ?? 0) + (system ?? 0),
    executorCpuSeconds: (await executor.cpuSeconds()) - executorCpuBefore,
  };
}

async function measure(trick: Trick): Promise<void> {
  const plain: PlainVariant = [trick.module];
  const fastBin = await packageBin();
  const plainBin = await packageBin(plain);
  const fastServer = await startExecutor(fastBin);
  const plainServer = trick.side === 'executor' ? await startExecutor(plainBin) : fastServer;
  const sides = {
    fast: { bin: fastBin, server: fastServer, samples: [] as Sample[] },
    plain: {
      bin: trick.side === 'client' ? plainBin : fastBin,
      server: plainServer,
      samples: [] as Sample[],
    },
  };
  try {
    await runOnce(fastBin, fastServer, 0); // warm the page cache and the executor
    for (let round = 0; round < SAMPLES; round += 1) {
      for (const side of round % 2 === 0 ? [sides.fast, sides.plain] : [sides.plain, sides.fast]) {
        side.samples.push(await runOnce(side.bin, side.server, round));
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
  const cpuKey = trick.side === 'client' ? 'cliCpuSeconds' : 'executorCpuSeconds';
  const fastCpu = median(sides.fast.samples, cpuKey);
  const plainCpu = median(sides.plain.samples, cpuKey);
  console.log(
    `${trick.name.padEnd(22)} ${trick.side.padEnd(8)} ` +
      `MB/s fast ${fastMb.toFixed(1)} plain ${plainMb.toFixed(1)} (${(fastMb / plainMb).toFixed(2)}x)  ` +
      `${trick.side === 'client' ? 'CLI' : 'executor'} CPU s fast ${fastCpu.toFixed(2)} plain ${plainCpu.toFixed(2)} (${(plainCpu / fastCpu).toFixed(2)}x)`,
  );
}

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const BLOCK = 100;

/** Warm `fs/getMetadata` p50 against the shipped executor and the twin's, blocks alternating. */
async function measureLatency(trick: Trick): Promise<void> {
  const servers = [await startTsExecutorProcess(), await startTsExecutorProcess([trick.module])];
  try {
    const sessions = await Promise.all(servers.map((server) => handwrittenClient(server.url)));
    const path = await sessions[0]!.environmentCwd();
    const samples: number[][] = [[], []];
    for (let done = 0; done < CALLS + BLOCK; done += BLOCK) {
      for (const side of (done / BLOCK) % 2 === 0 ? [0, 1] : [1, 0]) {
        for (let call = 0; call < BLOCK; call += 1) {
          const start = process.hrtime.bigint();
          await sessions[side]!.getMetadata(path);
          // The first block of each side warms up and is not counted.
          if (done > 0) samples[side]!.push(Number(process.hrtime.bigint() - start) / 1e3);
        }
      }
    }
    for (const session of sessions) session.close();
    const [fast, plain] = samples.map((side) => summarize(side).p50) as [number, number];
    console.log(
      `${trick.name.padEnd(22)} ${trick.side.padEnd(8)} ` +
        `fs/getMetadata p50 us fast ${fast.toFixed(1)} plain ${plain.toFixed(1)} (${(plain / fast).toFixed(2)}x)`,
    );
  } finally {
    for (const server of servers) await server.stop();
  }
}

async function main(): Promise<void> {
  const chosen = (process.env.FAST_PATHS ?? '').split(',').filter(Boolean);
  const tricks = chosen.length === 0 ? TRICKS : TRICKS.filter((t) => chosen.includes(t.name));
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  console.log(
    `# execrx run --url … -- head -c ${MIB}MiB /dev/zero | counter; ${SAMPLES} interleaved samples a side, medians; load ${load}`,
  );
  for (const trick of tricks) {
    await (trick.figure === 'latency' ? measureLatency(trick) : measure(trick));
  }
}

await main();
