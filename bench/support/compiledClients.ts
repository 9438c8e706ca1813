/**
 * The latency benchmark's two clients as the JavaScript `tsc` emits, the form a user of the
 * built package runs. Loaded from source through tsx instead, every closure passes through
 * esbuild's `__name` helper (tsx keeps function names), a cost that falls on our client's
 * many small closures (~20-40 µs per connect in a CPU profile) and hardly on the hand-written
 * one, so the ratio would measure the loader, not the client.
 *
 * `tsc` compiles `latencyDrivers.ts` and everything it imports (our `src/` and the
 * hand-written client) into `node_modules/.cache/execrx-bench-clients/<pid>/`, removed at exit.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

type LatencyDrivers = typeof import('./latencyDrivers.js');

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TSC = `${REPO}node_modules/typescript/bin/tsc`;

/** Compiles the drivers (once per call) and imports the compiled module. */
export async function compiledLatencyDrivers(): Promise<LatencyDrivers> {
  const outDir = `${REPO}node_modules/.cache/execrx-bench-clients/${process.pid}`;
  await mkdir(outDir, { recursive: true });
  process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
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
  const entry = `${outDir}/bench/support/latencyDrivers.js`;
  try {
    return (await import(pathToFileURL(entry).href)) as LatencyDrivers;
  } catch (error) {
    throw new Error(`compiling the benchmark clients failed: ${failure ?? String(error)}`);
  }
}
