/**
 * The worktree's built CLI (`bin/execrx.js`, after `npm run build`) as benchmark servers:
 * `execrx serve`, `execrx rendezvous`, `execrx serve --remote`, each its own process, killed
 * by pid when the benchmark ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const EXECRX_BIN = fileURLToPath(new URL('../../bin/execrx.js', import.meta.url));
const CLI_BUNDLE = fileURLToPath(new URL('../../dist/cli/main.bundle.js', import.meta.url));
const children: ChildProcess[] = [];

/** Why the built CLI cannot be used, or undefined. */
export function cliMissing(): string | undefined {
  return existsSync(CLI_BUNDLE) ? undefined : 'runs the built CLI: run `npm run build` first';
}

export interface StartedCli {
  /** The first line it printed on stdout (a URL). */
  readonly line: string;
  readonly pid: number;
}

/** Spawns `node bin/execrx.js <args>` and resolves with its first stdout line and its pid. */
export function startCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<StartedCli> {
  const child = spawn(process.execPath, [EXECRX_BIN, ...args], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, ...env },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      output += text;
      const newline = output.indexOf('\n');
      if (newline !== -1) resolve({ line: output.slice(0, newline).trim(), pid: child.pid! });
    });
    child.once('exit', (code) => reject(new Error(`execrx ${args[0]} exited early (${code})`)));
  });
}

/** Stops every CLI process this module started (by pid). */
export function stopClis(): void {
  for (const child of children.splice(0)) child.kill();
}

/** Resident set size of process `pid` in bytes (Linux `/proc`), 0 when unknown. */
export async function rssOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
