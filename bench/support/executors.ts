/**
 * The executors the benchmarks compare, each in its own process on a loopback port.
 *
 * Our executor is started exactly the way a user starts it: `execrx serve --listen
 * ws://127.0.0.1:0` through the package's own `bin/execrx.js`, running compiled JavaScript
 * (as the binary runs compiled code). So the figures include whatever the CLI entry does for
 * the executor process (engine flags, lazy module loading). To compile the current `src/`
 * without touching the shared `dist/`, each benchmark run lays out a private copy of the
 * package under `node_modules/.cache/execrx-bench/<pid>/` — `bin/execrx.js` and
 * `package.json` copied unchanged, `dist/` built there with `tsc -p tsconfig.build.json` and
 * `scripts/bundle-cli.mjs`, as `npm run build` does — and spawns that copy's bin.
 *
 * `EXECRX_BENCH_FROM_SOURCE=1` runs the CLI from source through tsx instead (slower: tsx's
 * esbuild keeps function names, so every closure goes through a `__name` helper).
 * `EXECRX_BENCH_SERVE_FLAGS` adds flags to `execrx serve`, e.g. `--no-warm-up` to see what the
 * warm-up (src/server/fastpath/warmUp.ts) is worth.
 *
 * A `PlainVariant` (bench/support/plainTwins.ts) builds a second copy with chosen fast paths
 * replaced by their plain twins, so that one run can compare the two side by side;
 * `packageBin(variant)` gives that copy's `bin/execrx.js` for CLI-level benchmarks.
 */
import { spawn, execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { copyFile, cp, mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { overlayPlainTwins, variantLabel, type PlainVariant } from './plainTwins.js';
import {
  startCodexExecServer,
  type RunningExecServer,
} from '../../spec/support/codexExecServer.js';

export { startCodexExecServer };
export type { RunningExecServer };

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SERVE_TS = fileURLToPath(new URL('./serveTsExecutor.ts', import.meta.url));
const TSC = `${REPO}node_modules/typescript/bin/tsc`;
const BUNDLE_CLI = `${REPO}scripts/bundle-cli.mjs`;
const SERVE_ARGS = [
  'serve',
  '--listen',
  'ws://127.0.0.1:0',
  ...(process.env.EXECRX_BENCH_SERVE_FLAGS ?? '').split(' ').filter(Boolean),
];

const built = new Map<string, Promise<string>>();

/**
 * Lays out the package copy for `variant` (once per process and variant) and returns the path
 * of its `bin/execrx.js`.
 */
export function packageBin(variant: PlainVariant = []): Promise<string> {
  const label = variantLabel(variant);
  const PID_DIR = `${REPO}node_modules/.cache/execrx-bench/${process.pid}`;
  const PACKAGE_DIR = `${PID_DIR}/${label}`;
  const existing = built.get(label);
  if (existing) return existing;
  const building = (async () => {
    await rm(PACKAGE_DIR, { recursive: true, force: true });
    await mkdir(`${PACKAGE_DIR}/bin`, { recursive: true });
    await copyFile(`${REPO}bin/execrx.js`, `${PACKAGE_DIR}/bin/execrx.js`);
    await copyFile(`${REPO}package.json`, `${PACKAGE_DIR}/package.json`);
    // A variant starts from the shipped build's compiled tree (one `tsc` per benchmark run).
    if (variant.length > 0) {
      await packageBin([]);
      await cp(`${PID_DIR}/${variantLabel([])}/dist`, `${PACKAGE_DIR}/dist`, { recursive: true });
    } else
      await new Promise<void>((resolve) =>
        // Type errors elsewhere in the tree (other work in progress) do not stop the emit.
        execFile(
          process.execPath,
          [
            TSC,
            '-p',
            `${REPO}tsconfig.build.json`,
            '--outDir',
            `${PACKAGE_DIR}/dist`,
            '--declaration',
            'false',
            '--declarationMap',
            'false',
          ],
          { cwd: REPO },
          () => resolve(),
        ),
      );
    await overlayPlainTwins(`${PACKAGE_DIR}/dist`, variant);
    // bin/execrx.js loads the bundled CLI, as in the built package.
    await new Promise<void>((resolve) =>
      execFile(process.execPath, [BUNDLE_CLI, PACKAGE_DIR], { cwd: REPO }, () => resolve()),
    );
    if (!existsSync(`${PACKAGE_DIR}/dist/cli/main.bundle.js`))
      throw new Error(`building the execrx CLI into ${PACKAGE_DIR} failed`);
    // The copies are only needed while this benchmark runs (every variant builds the fast one).
    if (variant.length === 0)
      process.once('exit', () => rmSync(PID_DIR, { recursive: true, force: true }));
    return `${PACKAGE_DIR}/bin/execrx.js`;
  })();
  built.set(label, building);
  return building;
}

/**
 * Starts `execrx serve` (compiled, with `variant`'s plain twins swapped in; from source with
 * EXECRX_BENCH_FROM_SOURCE=1, which ignores the variant).
 */
export async function startTsExecutorProcess(
  variant: PlainVariant = [],
): Promise<RunningExecServer> {
  const args =
    process.env.EXECRX_BENCH_FROM_SOURCE === '1'
      ? ['--import', 'tsx', SERVE_TS, ...SERVE_ARGS]
      : [await packageBin(variant), ...SERVE_ARGS];
  return startNodeServer(args, 'execrx serve');
}

/** Starts `execrx serve` from another checkout's built `bin/execrx.js` (a before/after column). */
export function startExecutorFromBin(bin: string): Promise<RunningExecServer> {
  return startNodeServer([bin, ...SERVE_ARGS], `execrx serve (${bin})`);
}

/** Starts `bareNodeServer.mjs`, executor-cold-latency's yardstick (no checks, not an executor). */
export function startBareNodeServer(): Promise<RunningExecServer> {
  return startNodeServer(
    [fileURLToPath(new URL('bareNodeServer.mjs', import.meta.url))],
    'bare server',
  );
}

/** Spawns `node <args>` and waits for the URL it prints on its first stdout line. */
async function startNodeServer(args: readonly string[], name: string): Promise<RunningExecServer> {
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      output += text;
      const newline = output.indexOf('\n');
      if (newline !== -1) resolve(output.slice(0, newline).trim());
    });
    child.once('exit', (code) => reject(new Error(`${name} exited early (${code})`)));
  });
  child.stdout.resume();
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
