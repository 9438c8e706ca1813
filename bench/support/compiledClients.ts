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
 * replaced by their plain twins in that copy.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { overlayPlainTwins, variantLabel, type PlainVariant } from './plainTwins.js';

type LatencyDrivers = typeof import('./latencyDrivers.js');

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TSC = `${REPO}node_modules/typescript/bin/tsc`;

/** Compiles the drivers (once per call) with `variant`'s twins and imports the compiled module. */
export async function compiledLatencyDrivers(
  variant: PlainVariant = [],
): Promise<LatencyDrivers> {
  const pidDir = `${REPO}node_modules/.cache/execrx-bench-clients/${process.pid}`;
  const outDir = `${pidDir}/${variantLabel(variant)}`;
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
  await overlayPlainTwins(`${outDir}/src`, variant);
  const entry = `${outDir}/bench/support/latencyDrivers.js`;
  try {
    return (await import(pathToFileURL(entry).href)) as LatencyDrivers;
  } catch (error) {
    throw new Error(`compiling the benchmark clients failed: ${failure ?? String(error)}`);
  }
}
