/**
 * The exec-servers the agent scenarios run against, each reachable the way codex finds an
 * executor: the real `codex exec-server` (first, to prove each scenario's expectations) and
 * our `execrx serve` (the built CLI). Everything started here is stopped by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  cleanEnv,
  codexCommand,
  startCodexExecServer,
  stopChild,
} from '../../support/codexExecServer.js';
import { startCli, type RunningCli } from '../../cli/support/runCli.js';
import { cacheDir, freshDir } from './codexAgent.js';

export type ExecutorKind = 'codex exec-server' | 'execrx serve';
export const EXECUTOR_KINDS: readonly ExecutorKind[] = ['codex exec-server', 'execrx serve'];

/** How the agent reaches one executor: environment variables and CODEX_HOME files. */
export interface AgentTarget {
  env: Record<string, string>;
  homeFiles: Record<string, string>;
  stop(): Promise<void>;
}

const BIN = fileURLToPath(new URL('../../../bin/execrx.js', import.meta.url));
const START_TIMEOUT_MS = 30_000;

async function stopCli(cli: RunningCli): Promise<void> {
  if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGTERM');
  await cli.result;
}

/** A WebSocket executor named by CODEX_EXEC_SERVER_URL. */
export async function webSocketTarget(kind: ExecutorKind): Promise<AgentTarget> {
  if (kind === 'codex exec-server') {
    const server = await startCodexExecServer({ codexHomeParent: cacheDir() });
    return { env: { CODEX_EXEC_SERVER_URL: server.url }, homeFiles: {}, stop: server.stop };
  }
  const cli = startCli(['serve', '--no-warm-up'], { timeoutMs: 300_000 });
  const [url] = await cli.stdoutLines(1);
  return { env: { CODEX_EXEC_SERVER_URL: url as string }, homeFiles: {}, stop: () => stopCli(cli) };
}

/** A stdio executor that codex spawns itself, from $CODEX_HOME/environments.toml. */
export function stdioTarget(kind: ExecutorKind): AgentTarget {
  const { command, prefixArgs } = codexCommand();
  const [program, args] =
    kind === 'codex exec-server'
      ? [command, [...prefixArgs, 'exec-server', '--listen', 'stdio']]
      : [process.execPath, [BIN, 'serve', '--listen', 'stdio']];
  const toml = [
    'default = "devbox"',
    'include_local = false',
    '',
    '[[environments]]',
    'id = "devbox"',
    `program = ${JSON.stringify(program)}`,
    `args = ${JSON.stringify(args)}`,
    '',
  ].join('\n');
  return { env: {}, homeFiles: { 'environments.toml': toml }, stop: async () => undefined };
}

/**
 * `execrx rendezvous` with the executor registered through it (`--remote`), and the agent
 * given the CODEX_EXEC_SERVER_NOISE_* variables: the whole path is Noise over the relay.
 */
export async function noiseTarget(kind: ExecutorKind): Promise<AgentTarget> {
  const token = 'agent-spec-executor-token';
  const harnessToken = 'agent-spec-harness-token';
  const environmentId = 'agent-env';
  const rendezvous = startCli(['rendezvous'], {
    env: {
      EXECRX_RENDEZVOUS_EXECUTOR_TOKEN: token,
      EXECRX_RENDEZVOUS_HARNESS_TOKEN: harnessToken,
    },
    timeoutMs: 300_000,
  });
  const [registry] = (await rendezvous.stdoutLines(1)) as [string];
  const attached = waitForStderr(rendezvous.child, `${environmentId} executor attached`);
  let executor: { stop(): Promise<void> };
  if (kind === 'codex exec-server') {
    const home = freshDir('execrx-agent-exec-home-');
    const { command, prefixArgs } = codexCommand();
    const child = spawn(
      command,
      [...prefixArgs, 'exec-server', '--remote', registry, '--environment-id', environmentId],
      { env: cleanEnv({ CODEX_API_KEY: token }, home), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr?.resume();
    executor = {
      stop: async () => {
        await stopChild(child);
        rmSync(home, { recursive: true, force: true });
      },
    };
  } else {
    const cli = startCli(
      ['serve', '--no-warm-up', '--remote', registry, '--environment-id', environmentId],
      { env: { CODEX_API_KEY: token }, timeoutMs: 300_000 },
    );
    executor = { stop: () => stopCli(cli) };
  }
  try {
    await attached;
  } catch (error) {
    await executor.stop();
    await stopCli(rendezvous);
    throw error;
  }
  return {
    env: {
      CODEX_EXEC_SERVER_NOISE_REGISTRY_URL: registry,
      CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID: environmentId,
      CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN: harnessToken,
    },
    homeFiles: {},
    stop: async () => {
      await executor.stop();
      await stopCli(rendezvous);
    },
  };
}

function waitForStderr(child: ChildProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.stderr?.off('data', onData);
      reject(new Error(`no "${text}" within ${START_TIMEOUT_MS} ms; stderr: ${seen}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer | string): void => {
      seen += chunk.toString();
      if (seen.includes(text)) {
        clearTimeout(timer);
        child.stderr?.off('data', onData);
        resolve();
      }
    };
    child.stderr?.on('data', onData);
  });
}
