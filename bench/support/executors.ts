/** The executors the benchmarks compare, each in its own process on a loopback port. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  startCodexExecServer,
  type RunningExecServer,
} from '../../spec/support/codexExecServer.js';

export { startCodexExecServer };
export type { RunningExecServer };

const SERVE_TS = fileURLToPath(new URL('./serveTsExecutor.ts', import.meta.url));

/** Starts the TypeScript executor (from source, via tsx) in a child process. */
export async function startTsExecutorProcess(): Promise<RunningExecServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVE_TS], {
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
