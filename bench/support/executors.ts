/**
 * The executors the benchmarks compare, each in its own process on a loopback port.
 *
 * Our executor runs as compiled JavaScript, like the binary runs compiled code: `src/` is
 * built once per benchmark run with `tsc` into `node_modules/.cache/execrx-bench/`. Running
 * it from source through tsx instead costs it ~40 µs per request (tsx's esbuild keeps
 * function names, so every closure the executor creates per message goes through a
 * `__name` helper) — a handicap the binary does not have. `EXECRX_BENCH_FROM_SOURCE=1`
 * restores the tsx mode.
 */
import { spawn, execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  startCodexExecServer,
  type RunningExecServer,
} from '../../spec/support/codexExecServer.js';

export { startCodexExecServer };
export type { RunningExecServer };

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SERVE_TS = fileURLToPath(new URL('./serveTsExecutor.ts', import.meta.url));
const BUILD_DIR = `${REPO}node_modules/.cache/execrx-bench`;
const TSC = `${REPO}node_modules/typescript/bin/tsc`;

const SERVE_BUILT = `import { startExecServer } from './server/index.js';
const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
process.stdout.write(\`\${server.url}\\n\`);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
`;

let built: Promise<string> | undefined;

/** Compiles `src/` (once per process) and returns the built executor's entry script. */
function buildExecutor(): Promise<string> {
  built ??= (async () => {
    await mkdir(BUILD_DIR, { recursive: true });
    await new Promise<void>((resolve) =>
      // Type errors elsewhere in the tree (other work in progress) do not stop the emit.
      execFile(
        process.execPath,
        [TSC, '-p', `${REPO}tsconfig.build.json`, '--outDir', BUILD_DIR, '--declaration', 'false'],
        { cwd: REPO },
        () => resolve(),
      ),
    );
    if (!existsSync(`${BUILD_DIR}/server/index.js`))
      throw new Error(`building the TypeScript executor into ${BUILD_DIR} failed`);
    const entry = `${BUILD_DIR}/serveTsExecutor.mjs`;
    await writeFile(entry, SERVE_BUILT);
    return entry;
  })();
  return built;
}

/** Starts the TypeScript executor (compiled; from source with EXECRX_BENCH_FROM_SOURCE=1). */
export async function startTsExecutorProcess(): Promise<RunningExecServer> {
  const args =
    process.env.EXECRX_BENCH_FROM_SOURCE === '1'
      ? ['--import', 'tsx', SERVE_TS]
      : [await buildExecutor()];
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
    child.once('exit', (code) => reject(new Error(`TypeScript executor exited early (${code})`)));
  });
  child.stdout.resume();
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
