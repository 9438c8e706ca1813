/**
 * Spec helper: runs the built `execrx` command (`bin/execrx.js` → `dist/cli/main.bundle.js`, built by
 * `npm ci`/`npm run build`) as a child process and collects its output and exit code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built CLI (`npm run build`). */
export const BIN = fileURLToPath(new URL('../../../bin/execrx.js', import.meta.url));
const BUILT_MAIN = fileURLToPath(new URL('../../../dist/cli/main.bundle.js', import.meta.url));

export interface CliResult {
  /** Exit code, or null when the child died by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  /** Written to the child's stdin, which is then closed. Default: stdin is /dev/null. */
  readonly input?: string;
  readonly cwd?: string;
  /** Variables added to the child's environment (ours otherwise). */
  readonly env?: Readonly<Record<string, string>>;
  /** The child is SIGKILLed after this long (then the spec fails on the result). Default 15 s. */
  readonly timeoutMs?: number;
}

/** A started CLI child: wait for `result`, or poke it (signals, stdin) first. */
export interface RunningCli {
  readonly child: ChildProcess;
  readonly result: Promise<CliResult>;
  /** Resolves once `text` has appeared on stdout. */
  waitForStdout(text: string): Promise<void>;
  /** Everything printed on stdout so far. */
  stdoutSoFar(): string;
  /** Resolves with the first `count` stdout lines once they are complete. */
  stdoutLines(count: number): Promise<string[]>;
}

const running = new Set<ChildProcess>();

export function assertBuilt(): void {
  if (!existsSync(BUILT_MAIN)) {
    throw new Error(`${BUILT_MAIN} is missing: run \`npm run build\` before the CLI specs`);
  }
}

export function startCli(args: readonly string[], options: CliOptions = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, ...options.env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  const stdoutWaiters: Array<{ done: (stdout: string) => boolean; resolve: () => void }> = [];
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (text: string) => {
    stdout += text;
    for (const waiter of [...stdoutWaiters]) {
      if (waiter.done(stdout)) {
        stdoutWaiters.splice(stdoutWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  child.stderr!.on('data', (text: string) => (stderr += text));
  if (options.input !== undefined) child.stdin!.end(options.input);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 15_000);
  const result = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  const waitUntil = (done: (stdout: string) => boolean, what: string): Promise<void> =>
    done(stdout)
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          stdoutWaiters.push({ done, resolve });
          void result.then(() =>
            reject(new Error(`CLI exited before printing ${what}: ${stderr}`)),
          );
        });
  const waitForStdout = (text: string): Promise<void> =>
    waitUntil((out) => out.includes(text), JSON.stringify(text));
  const stdoutLines = async (count: number): Promise<string[]> => {
    await waitUntil((out) => out.split('\n').length > count, `${count} lines`);
    return stdout.split('\n').slice(0, count);
  };
  return { child, result, stdoutSoFar: () => stdout, waitForStdout, stdoutLines };
}

export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).result;
}

/** Kills every CLI child still running (call from afterEach). */
export async function killRunningClis(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
