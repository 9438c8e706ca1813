/**
 * The latency benchmark's two clients as the JavaScript `tsc` emits, the form a user of the
 * built package runs. Loaded from source through tsx instead, every closure passes through
 * esbuild's `__name` helper (tsx keeps function names), a cost that falls on our client's
 * many small closures (~20-40 µs per connect in a CPU profile) and hardly on the hand-written
 * one, so the ratio would measure the loader, not the client.
 *
 * `tsc` compiles `latencyDrivers.ts` and everything it imports (our `src/` and the
 * hand-written client) into `node_modules/.cache/execrx-bench-clients/<pid>/`, removed at exit.
 * With a `PlainVariant` (bench/support/plainTwins.ts), the chosen fast paths of `src/` are
 * replaced by their plain twins in a copy of that build.
 */
import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { overlayPlainTwins, variantLabel, type PlainVariant } from './plainTwins.js';

type LatencyDrivers = typeof import('./latencyDrivers.js');

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TSC = `${REPO}node_modules/typescript/bin/tsc`;

/** The shipped build, compiled once per process; each variant is a copy of it. */
let compiled: Promise<string> | undefined;

/** Compiles the drivers (once per process) with `variant`'s twins and imports the compiled module. */
export async function compiledLatencyDrivers(variant: PlainVariant = []): Promise<LatencyDrivers> {
  const pidDir = `${REPO}node_modules/.cache/execrx-bench-clients/${process.pid}`;
  const fastDir = await (compiled ??= compileDrivers(pidDir));
  const outDir = variant.length === 0 ? fastDir : `${pidDir}/${variantLabel(variant)}`;
  if (variant.length > 0) {
    await cp(fastDir, outDir, { recursive: true });
    await overlayPlainTwins(`${outDir}/src`, variant);
  }
  return (await import(
    pathToFileURL(`${outDir}/bench/support/latencyDrivers.js`).href
  )) as LatencyDrivers;
}

/** Runs tsc on the drivers into `<pidDir>/fast`; returns that directory. */
async function compileDrivers(pidDir: string): Promise<string> {
  const outDir = `${pidDir}/${variantLabel([])}`;
  await mkdir(outDir, { recursive: true });
  process.once('exit', () => rmSync(pidDir, { recursive: true, force: true }));
  const project = `${outDir}/tsconfig.json`;
  await writeFile(
    project,
    JSON.stringify({
      extends: `${REPO}tsconfig.json`,
      compilerOptions: {
        rootDir: REPO,
        outDir,
        noEmit: false,
        declaration: false,
        sourceMap: false,
      },
      files: [`${REPO}bench/support/latencyDrivers.ts`],
      include: [],
    }),
  );
  const failure = await new Promise<string | undefined>((resolve) =>
    execFile(process.execPath, [TSC, '-p', project], { cwd: REPO }, (error, stdout) =>
      resolve(error ? stdout || error.message : undefined),
    ),
  );
  if (!existsSync(`${outDir}/bench/support/latencyDrivers.js`)) {
    throw new Error(`compiling the benchmark clients failed: ${failure ?? 'no output'}`);
  }
  return outDir;
}
