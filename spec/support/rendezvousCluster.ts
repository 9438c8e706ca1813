/**
 * Test helpers for a rendezvous cluster on loopback, every part a real process: Redis, nodes
 * (`execrx rendezvous --store`), a front TCP proxy (the one stable address executors use:
 * each connection goes to the first node that accepts it, round robin, the way a load
 * balancer with health checks would), and executors of both kinds (`execrx serve --remote`,
 * `codex exec-server --remote`). Everything is stopped by pid.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cleanEnv, codexCommand } from './codexExecServer.js';
import { freePort } from './rendezvousRedis.js';

export const CLUSTER_EXECUTOR_TOKEN = 'cluster-executor-token';
export const CLUSTER_HARNESS_TOKEN = 'cluster-harness-token';
const CLI = resolve('bin/execrx.js');

export interface ClusterProcess {
  readonly child: ChildProcess;
  /** Everything written to stderr so far (bounded). */
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

function track(child: ChildProcess): ClusterProcess {
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    if (stderr.length < 256 * 1024) stderr += text;
  });
  child.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return {
    child,
    stderr: () => stderr,
    exited,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Resolves with the first stdout line, or rejects when the process exits first / after `ms`. */
function firstLine(child: ChildProcess, what: string, ms = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no output within ${ms} ms`)), ms);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => {
      out += text;
      const end = out.indexOf('\n');
      if (end !== -1) {
        clearTimeout(timer);
        resolve(out.slice(0, end));
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${signal ?? code}) before printing`));
    });
  });
}

/** Runs the CLI bundle with `args`; resolves once it printed its first stdout line. */
async function startCli(
  args: readonly string[],
  what: string,
  env: Readonly<Record<string, string>>,
): Promise<ClusterProcess> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tracked = track(child);
  try {
    await firstLine(child, what);
  } catch (error) {
    await tracked.kill();
    throw new Error(`${(error as Error).message}\n${tracked.stderr()}`);
  }
  return tracked;
}

export interface ClusterNode extends ClusterProcess {
  readonly port: number;
  readonly url: string;
}

/** A node sharing `redisUrl` behind `frontUrl` (without it, a single in-memory node). */
export async function startNode(
  redisUrl: string | undefined,
  frontUrl: string,
): Promise<ClusterNode> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // A single node is its own front.
  const cluster = redisUrl === undefined ? [] : ['--store', redisUrl, '--public-url', frontUrl];
  const tracked = await startCli(['rendezvous', '--listen', url, ...cluster], 'rendezvous node', {
    EXECRX_RENDEZVOUS_EXECUTOR_TOKEN: CLUSTER_EXECUTOR_TOKEN,
    EXECRX_RENDEZVOUS_HARNESS_TOKEN: CLUSTER_HARNESS_TOKEN,
  });
  return { ...tracked, port, url };
}

export interface Front {
  readonly url: string;
  close(): Promise<void>;
}

/** A TCP front: each connection goes to the next node (round robin) that accepts it. */
export async function startFront(ports: () => readonly number[]): Promise<Front> {
  let next = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((incoming) => {
    open.add(incoming);
    incoming.once('close', () => open.delete(incoming));
    incoming.on('error', () => undefined);
    incoming.pause();
    const candidates = [...ports()];
    const offset = next++;
    const attempt = (tried: number): void => {
      if (tried >= candidates.length) {
        incoming.destroy();
        return;
      }
      const port = candidates[(offset + tried) % candidates.length]!;
      const outgoing = connect(port, '127.0.0.1');
      // Refused (a dead or draining node): try the next one.
      outgoing.once('error', () => attempt(tried + 1));
      outgoing.once('connect', () => {
        outgoing.removeAllListeners('error');
        outgoing.on('error', () => incoming.destroy());
        open.add(outgoing);
        outgoing.once('close', () => {
          open.delete(outgoing);
          incoming.destroy();
        });
        incoming.once('close', () => outgoing.destroy());
        incoming.pipe(outgoing);
        outgoing.pipe(incoming);
        incoming.resume();
      });
    };
    attempt(0);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** `execrx serve --remote FRONT --environment-id ID`; resolves once it printed its status. */
export async function startTsRemote(
  frontUrl: string,
  environmentId: string,
): Promise<ClusterProcess> {
  return startCli(
    ['serve', '--no-warm-up', '--remote', frontUrl, '--environment-id', environmentId],
    'execrx serve --remote',
    { CODEX_API_KEY: CLUSTER_EXECUTOR_TOKEN },
  );
}

/** `codex exec-server --remote FRONT --environment-id ID` (attach is awaited by the caller). */
export async function startCodexClusterRemote(
  frontUrl: string,
  environmentId: string,
): Promise<ClusterProcess> {
  const codexHome = await mkdtemp(join(tmpdir(), 'execrx-cluster-codex-'));
  const { command, prefixArgs } = codexCommand();
  const child = spawn(
    command,
    [...prefixArgs, 'exec-server', '--remote', frontUrl, '--environment-id', environmentId],
    {
      env: { ...cleanEnv(undefined, codexHome), CODEX_API_KEY: CLUSTER_EXECUTOR_TOKEN },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const tracked = track(child);
  void tracked.exited.then(() => rm(codexHome, { recursive: true, force: true }));
  return tracked;
}

/** Polls `/connect` at `baseUrl` until the environment is attached (200); returns the bundle URL. */
export async function waitAttached(
  baseUrl: string,
  environmentId: string,
  harnessKey: unknown,
  ms = 30_000,
): Promise<string> {
  const deadline = Date.now() + ms;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${baseUrl}/cloud/environment/${environmentId}/connect`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLUSTER_HARNESS_TOKEN}` },
        body: JSON.stringify({ harness_public_key: harnessKey }),
      });
      last = `${response.status} ${await response.text()}`;
      if (response.status === 200) return (JSON.parse(last.slice(4)) as { url: string }).url;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`environment ${environmentId} not attached within ${ms} ms: ${last}`);
}
