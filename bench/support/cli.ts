/**
 * The worktree's built CLI (`bin/execrx.js`, after `npm run build`) as benchmark servers:
 * `execrx serve`, `execrx rendezvous`, `execrx serve --remote`, each its own process, killed
 * by pid when the benchmark ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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

export interface BenchServers {
  /** `execrx serve --listen ws://127.0.0.1:0`'s URL. */
  readonly url: string;
  /** `execrx rendezvous --listen http://127.0.0.1:0`'s URL, `environmentId` registered there. */
  readonly registry: string;
  /** The rendezvous' harness token (a client's `CODEX_API_KEY`). */
  readonly harnessToken: string;
}

/**
 * Starts the servers of a fresh-run benchmark: `execrx serve` on a WebSocket, and `execrx
 * rendezvous` with `execrx serve --remote` registered as `environmentId` (fresh tokens).
 */
export async function startBenchServers(environmentId: string): Promise<BenchServers> {
  const executorToken = randomBytes(16).toString('hex');
  const harnessToken = randomBytes(16).toString('hex');
  const { line: url } = await startCli(['serve', '--listen', 'ws://127.0.0.1:0']);
  const { line: registry } = await startCli(['rendezvous', '--listen', 'http://127.0.0.1:0'], {
    EXECRX_RENDEZVOUS_EXECUTOR_TOKEN: executorToken,
    EXECRX_RENDEZVOUS_HARNESS_TOKEN: harnessToken,
  });
  await startCli(['serve', '--remote', registry, '--environment-id', environmentId], {
    CODEX_API_KEY: executorToken,
  });
  return { url, registry, harnessToken };
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
