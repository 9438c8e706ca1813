/**
 * Runs the real `codex exec` (the agent of @openai/codex 0.169.0) once, against a mock model
 * (mockResponses.ts) and whichever exec-server the environment names, in a fresh CODEX_HOME
 * made outside /tmp (codex will not install its helper binaries under /tmp). Bounded: the
 * agent is killed (by pid) when it overruns.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, codexCommand } from '../../support/codexExecServer.js';

export interface AgentRun {
  code: number | null;
  /** `--json` event lines that parsed. */
  events: Record<string, unknown>[];
  stderr: string;
}

export interface AgentOptions {
  /** The mock's base URL (`http://127.0.0.1:PORT/v1`). */
  baseUrl: string;
  /** The directory the agent works in (`-C`). */
  workdir: string;
  /** `read-only`, `workspace-write`, or `bypass` (no sandbox, no approvals). */
  sandbox: 'read-only' | 'workspace-write' | 'bypass';
  /** Extra environment (CODEX_EXEC_SERVER_URL, the Noise variables, …). */
  env?: Record<string, string>;
  /** Files to write into CODEX_HOME first (e.g. environments.toml). */
  homeFiles?: Record<string, string>;
  timeoutMs?: number;
}

/** $HOME/.cache, made if missing: a place outside /tmp for throwaway directories. */
export function cacheDir(): string {
  const parent = join(homedir(), '.cache');
  mkdirSync(parent, { recursive: true });
  return parent;
}

/** A fresh directory under $HOME/.cache (outside /tmp). */
export function freshDir(prefix: string): string {
  return mkdtempSync(join(cacheDir(), prefix));
}

export async function runAgent(options: AgentOptions): Promise<AgentRun> {
  const codexHome = freshDir('execrx-agent-home-');
  for (const [name, text] of Object.entries(options.homeFiles ?? {})) {
    writeFileSync(join(codexHome, name), text);
  }
  const { command, prefixArgs } = codexCommand();
  const provider =
    `model_providers.mock={name="mock", base_url="${options.baseUrl}", wire_api="responses", ` +
    'env_key="CODEX_API_KEY", request_max_retries=0, stream_max_retries=0}';
  const sandboxArgs =
    options.sandbox === 'bypass'
      ? ['--dangerously-bypass-approvals-and-sandbox']
      : ['-s', options.sandbox];
  const child = spawn(
    command,
    [
      ...prefixArgs,
      'exec',
      '--skip-git-repo-check',
      '--ephemeral',
      '--json',
      '-c',
      'model_provider=mock',
      '-c',
      provider,
      '-m',
      'gpt-5.5',
      ...sandboxArgs,
      '-C',
      options.workdir,
      'do the task',
    ],
    {
      cwd: options.workdir,
      env: cleanEnv({ CODEX_API_KEY: 'dummy', ...options.env }, codexHome),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    if (stderr.length < 65_536) stderr += text;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
  try {
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    const events: Record<string, unknown>[] = [];
    for (const line of stdout.split('\n')) {
      if (line.trim() === '') continue;
      try {
        events.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not an event line
      }
    }
    return { code, events, stderr };
  } finally {
    clearTimeout(timer);
    rmSync(codexHome, { recursive: true, force: true });
  }
}
