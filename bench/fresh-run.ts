/**
 * A fresh `execrx run … -- /usr/bin/true`, one process per sample (issue #17: `--url` ≤ 0.8x
 * and `--registry` ≤ 1.0x a fresh `ssh`), with and without the CLI's code cache
 * (src/cli/fastpath/codeCache.ts against its plain twin, bench/plain/cli/fastpath/codeCache.ts):
 * wall time and the child's CPU (user + system, from bash's `time`), medians of interleaved
 * rounds (each round runs every contender once, in a rotating order).
 *
 * Contenders: the build with the code cache (its cache directory warmed by one run of each
 * path first), the same build with the plain twin, and — unless `BENCH_SSH=0` or the machine
 * cannot (root and OpenSSH, see bench/support/sshd.ts) — a fresh `ssh` to a private sshd.
 * `EXECRX_BENCH_BASELINE=<package dir>` adds another built tree (e.g. main's) as a column;
 * `BENCH_COLD=1` adds the code-cache build with an empty cache directory every run (what the
 * first run after an install or upgrade costs).
 *
 * Usage: `npm run build`, then `BENCH_SAMPLES=40 npx tsx bench/fresh-run.ts` (default 30).
 * The servers (`execrx serve`, `execrx rendezvous`, `execrx serve --remote`) are this
 * worktree's build; the compared CLIs are package copies (bench/support/executors.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliMissing, startBenchServers, stopClis } from './support/cli.js';
import { packageBin } from './support/executors.js';
import { startSshd, sshdMissing, type RunningSshd } from './support/sshd.js';
import { summarize } from './support/stats.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
const ENVIRONMENT_ID = 'fresh-run';
const PLAIN = ['cli/fastpath/codeCache'];

interface Timed {
  readonly wallMs: number;
  readonly cpuMs: number;
}

interface Contender {
  readonly label: string;
  readonly run: () => Promise<Timed>;
  readonly wall: number[];
  readonly cpu: number[];
}

/** Runs `argv` under bash's `time` (stdio to /dev/null); its wall and CPU time, or throws. */
function timed(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Timed> {
  const script =
    'TIMEFORMAT="%3R %3U %3S"; { time "$@" </dev/null >/dev/null 2>/dev/null; } 2>&1; exit $?';
  const child = spawn('bash', ['-c', script, 'bash', ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => (output += text));
  return new Promise((resolve, reject) =>
    child.once('close', (code) => {
      const [real, user, system] = output.trim().split(/\s+/).map(Number);
      if (code !== 0 || real === undefined || user === undefined || system === undefined)
        reject(new Error(`${argv.join(' ')} exited ${code}: ${output}`));
      else resolve({ wallMs: real * 1000, cpuMs: (user + system) * 1000 });
    }),
  );
}

function contender(label: string, run: () => Promise<Timed>): Contender {
  return { label, run, wall: [], cpu: [] };
}

async function rounds(contenders: readonly Contender[], count: number): Promise<void> {
  for (let round = 0; round < count; round += 1) {
    for (let i = 0; i < contenders.length; i += 1) {
      const c = contenders[(i + round) % contenders.length]!;
      const { wallMs, cpuMs } = await c.run();
      c.wall.push(wallMs);
      c.cpu.push(cpuMs);
    }
  }
}

function print(title: string, contenders: readonly Contender[], base: Contender): void {
  console.log(title);
  const p50 = (values: readonly number[]): number => summarize(values).p50;
  for (const c of contenders) {
    const wall = p50(c.wall);
    const cpu = p50(c.cpu);
    console.log(
      `  ${c.label.padEnd(36)} wall p50 ${wall.toFixed(1).padStart(7)} ms (${(wall / p50(base.wall)).toFixed(3)}x)` +
        `  CPU p50 ${cpu.toFixed(1).padStart(7)} ms (${(cpu / p50(base.cpu)).toFixed(3)}x)`,
    );
  }
}

async function main(): Promise<void> {
  const missing = cliMissing();
  if (missing) throw new Error(`fresh-run ${missing}`);
  const withSsh = process.env.BENCH_SSH !== '0' && sshdMissing() === undefined;
  const scratch = mkdtempSync(join(tmpdir(), 'execrx-fresh-run-'));
  let sshd: RunningSshd | undefined;
  try {
    const [fastBin, plainBin] = [await packageBin([]), await packageBin(PLAIN)];
    const baselineBin = process.env.EXECRX_BENCH_BASELINE
      ? join(process.env.EXECRX_BENCH_BASELINE, 'bin/execrx.js')
      : undefined;
    const { url, registry, harnessToken } = await startBenchServers(ENVIRONMENT_ID);
    sshd = withSsh ? await startSshd() : undefined;

    const cacheHome = mkdtempSync(join(scratch, 'cache-'));
    const env = { XDG_CACHE_HOME: cacheHome, CODEX_API_KEY: harnessToken };
    const node = process.execPath;
    const paths = {
      '--url': ['run', '--url', url, '--no-stdin', '--', '/usr/bin/true'],
      '--registry': [
        'run',
        '--registry',
        registry,
        '--environment-id',
        ENVIRONMENT_ID,
        '--no-stdin',
        '--',
        '/usr/bin/true',
      ],
    };
    for (const args of Object.values(paths)) await timed([node, fastBin, ...args], env);

    console.log(
      `fresh run: ${SAMPLES} rounds; node ${process.version}; load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (const [path, args] of Object.entries(paths)) {
      const plain = contender(`execrx run ${path}, plain`, () =>
        timed([node, plainBin, ...args], env),
      );
      const contenders = [
        plain,
        contender(`execrx run ${path}, code cache`, () => timed([node, fastBin, ...args], env)),
      ];
      if (process.env.BENCH_COLD === '1')
        contenders.push(
          contender(`execrx run ${path}, empty cache`, async () => {
            const empty = mkdtempSync(join(scratch, 'empty-'));
            try {
              return await timed([node, fastBin, ...args], { ...env, XDG_CACHE_HOME: empty });
            } finally {
              rmSync(empty, { recursive: true, force: true });
            }
          }),
        );
      if (baselineBin)
        contenders.push(
          contender(`execrx run ${path}, baseline`, () => timed([node, baselineBin, ...args], env)),
        );
      if (sshd) {
        const ssh = sshd;
        contenders.push(
          contender('ssh, fresh connection', () =>
            timed(['ssh', ...ssh.sshArgs(false), '/usr/bin/true']),
          ),
        );
      }
      await rounds(contenders, SAMPLES);
      print(`execrx run ${path} -- /usr/bin/true (ratios to the plain twin)`, contenders, plain);
      const ssh = contenders.find((c) => c.label.startsWith('ssh'));
      if (ssh) {
        const p50 = (values: readonly number[]): number => summarize(values).p50;
        for (const c of contenders.slice(0, -1))
          console.log(
            `  ${c.label.padEnd(36)} / ssh fresh, wall p50: ${(p50(c.wall) / p50(ssh.wall)).toFixed(2)}x`,
          );
      }
    }
    console.log(
      `load at the end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await sshd?.stop();
    stopClis();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
