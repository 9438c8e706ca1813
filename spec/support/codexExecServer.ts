/**
 * Test helper: run the real `codex exec-server` (npm @openai/codex@0.169.0) on an ephemeral
 * loopback port with a throwaway CODEX_HOME, and stop it again.
 *
 * The native binary is spawned directly (no Node wrapper in between) so startup is fast and
 * `stop()` signals the executor itself, not a launcher.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A running executor reachable at `url` (`ws://127.0.0.1:PORT`). */
export interface RunningExecServer {
  url: string;
  /** The executor's process id, where the starter knows it (benchmarks read its CPU time). */
  pid?: number;
  /** Kills the executor (SIGTERM, then SIGKILL) and resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts one executor; the TypeScript executor provides a factory of the same type. */
export type ExecServerFactory = () => Promise<RunningExecServer>;

export interface CodexExecServerOptions {
  /** Extra command-line arguments after `exec-server --listen ws://127.0.0.1:0`. */
  args?: readonly string[];
  /** Extra environment variables for the executor (after CODEX_* vars are stripped). */
  env?: Readonly<Record<string, string>>;
  /** Working directory of the executor (reported as `environment/info` `cwd`). */
  cwd?: string;
  /**
   * Where the throwaway CODEX_HOME is made (default the OS temp dir). Codex refuses to put its
   * helper binaries (the Linux sandbox among them) under /tmp, so sandboxed runs need another.
   */
  codexHomeParent?: string;
  /** CODEX_HOME of the executor (kept afterwards); default a fresh temp dir, removed on stop. */
  codexHome?: string;
  /** How long to wait for the `ws://` line. Default 15 s. */
  startTimeoutMs?: number;
  /** A command that runs the executor, e.g. `['setpriv', '--reuid=65534', …]`. */
  launcher?: readonly string[];
}

const TARGET_TRIPLES: Record<string, string> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
};

/** Path of the native codex binary, or of the npm wrapper script when the binary is not found. */
export function codexCommand(): { command: string; prefixArgs: string[] } {
  const require = createRequire(import.meta.url);
  const platformKey = `${process.platform}-${process.arch}`;
  const triple = TARGET_TRIPLES[platformKey];
  if (triple !== undefined) {
    try {
      const pkg = require.resolve(`@openai/codex-${platformKey}/package.json`);
      const binary = join(dirname(pkg), 'vendor', triple, 'bin', 'codex');
      if (existsSync(binary)) return { command: binary, prefixArgs: [] };
    } catch {
      // fall through to the wrapper
    }
  }
  const wrapper = require.resolve('@openai/codex/bin/codex.js');
  return { command: process.execPath, prefixArgs: [wrapper] };
}

/** `process.env` without `CODEX_*`, plus `extra` and `CODEX_HOME`. */
export function cleanEnv(
  extra: Readonly<Record<string, string>> | undefined,
  codexHome: string,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('CODEX_') && value !== undefined) env[key] = value;
  }
  return { ...env, ...extra, CODEX_HOME: codexHome };
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, ms);
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

/** Ends `child` (SIGTERM, then SIGKILL after 3 s) and destroys its pipes. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (!(await waitForExit(child, 0))) {
    child.kill('SIGTERM');
    if (!(await waitForExit(child, 3_000))) {
      child.kill('SIGKILL');
      await waitForExit(child, 5_000);
    }
  }
  child.stdout?.destroy();
  child.stderr?.destroy();
}

/** Starts `codex exec-server --listen ws://127.0.0.1:0` and resolves with its bound URL. */
export async function startCodexExecServer(
  options: CodexExecServerOptions = {},
): Promise<RunningExecServer> {
  const ownHome = options.codexHome === undefined;
  const codexHome =
    options.codexHome ??
    (await mkdtemp(join(options.codexHomeParent ?? tmpdir(), 'execrx-codex-home-')));
  const codex = codexCommand();
  const [command, ...prefixArgs] = [
    ...(options.launcher ?? []),
    codex.command,
    ...codex.prefixArgs,
  ] as [string, ...string[]];
  const child = spawn(
    command,
    [...prefixArgs, 'exec-server', '--listen', 'ws://127.0.0.1:0', ...(options.args ?? [])],
    {
      cwd: options.cwd ?? process.cwd(),
      env: cleanEnv(options.env, codexHome),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );

  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    if (stderr.length < 16_384) stderr += text;
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await stopChild(child);
      if (ownHome) await rm(codexHome, { recursive: true, force: true });
    })();
    return stopping;
  };

  const timeoutMs = options.startTimeoutMs ?? 15_000;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      const fail = (why: string) => {
        cleanup();
        reject(
          new Error(
            `codex exec-server did not print its ws:// URL (${why}); command: ${command} ${prefixArgs.join(' ')} exec-server; stderr:\n${stderr || '(empty)'}`,
          ),
        );
      };
      const onData = (text: string) => {
        stdout += text;
        const newline = stdout.indexOf('\n');
        if (newline === -1) return;
        const line = stdout.slice(0, newline).trim();
        cleanup();
        if (line.startsWith('ws://')) resolve(line);
        else fail(`first stdout line was \`${line}\``);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
        fail(`it exited with ${signal ?? `code ${code}`}`);
      const onError = (error: Error) => fail(`spawn failed: ${error.message}`);
      const timer = setTimeout(() => fail(`no output within ${timeoutMs} ms`), timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.off('close', onExit);
        child.off('error', onError);
      };
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', onData);
      // 'close' (not 'exit') so stderr is fully read before the error is built.
      child.once('close', onExit);
      child.once('error', onError);
    });
    // Keep draining stdout so the executor never blocks on a full pipe.
    child.stdout!.resume();
    return { url, pid: child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** ExecServerFactory for the real binary with default options. */
export const codexExecServerFactory: ExecServerFactory = () => startCodexExecServer();
