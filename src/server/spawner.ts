/**
 * Pipe-mode children started by a small helper process instead of by the executor itself.
 *
 * Node's `spawn` forks the calling process, and a fork copies the page tables of all of its
 * memory; the parent then takes a copy-on-write fault on every page it writes next. An
 * executor grows while it streams output, so each `process/start` would cost it more than a
 * small process pays (docs/performance.md, "Process start from a spawner, output into one
 * buffer"). The helper is a bare Node process that does nothing but spawn: it gets a request
 * over its IPC channel, opens the child's ends of the FIFOs by path (stdioPipes.ts), spawns
 * the child detached, closes its copies, and reports the pid or the spawn error, then the exit.
 *
 * One helper per executor (its SessionRegistry), started by the first pipe-mode start (which,
 * like every start while the helper is not ready, spawns directly) and stopped with the
 * executor. It never keeps the executor alive, and exits when the executor's end of the
 * channel goes. If it dies, the children it started are reported as exited with -1 (unknown)
 * once they are gone, a start that never reached it is made directly (one it had in hand
 * fails: the child may have started), and the next start spawns directly and starts a new
 * helper. Guarded by spec/server/spawner.spec.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** What the helper needs to start one child. */
export interface SpawnerRequest {
  readonly program: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly argv0: string | undefined;
  /** FIFO paths for the child's fds 0, 1 and 2; null: /dev/null (stdin only). */
  readonly stdio: readonly [string | null, string, string];
}

/** The spawn error the helper met, with the fields `osError.ts` reads. */
export interface SpawnerError {
  readonly code?: string;
  readonly errno?: number;
  readonly syscall?: string;
  readonly path?: string;
  readonly message: string;
}

type Reply =
  | { ready: true }
  | { id: number; pid: number }
  | { id: number; error: SpawnerError }
  | { id: number; exit: number | null; signal: NodeJS.Signals | null };

/**
 * The outcome of one start: `started` then `exited`, or `failed` alone. `failed` with a
 * SpawnerLostError means the request never reached the helper (start the child another way);
 * any other error is the spawn's own (ENOENT, EACCES, …), or the helper died with the request
 * in hand: then the child may have started, so it is not started again.
 */
export interface Pending {
  started(pid: number): void;
  failed(error: Error): void;
  exited(code: number | null, signal: NodeJS.Signals | null): void;
}

/** The helper was gone before the request reached it. */
export class SpawnerLostError extends Error {
  constructor() {
    super('the process spawner exited before it got the request');
    this.name = 'SpawnerLostError';
  }
}

/**
 * The helper's program, handed to `node -` on its stdin (so it needs no file of its own in any
 * of the package's layouts: sources, `tsc` output, the CLI bundle). Plain JavaScript, Node
 * built-ins only.
 */
const HELPER_SOURCE = `
const { spawn } = require('node:child_process');
const { openSync, closeSync, constants } = require('node:fs');
process.on('SIGINT', () => {});
process.on('disconnect', () => process.exit(0));
const send = (message) => {
  if (process.connected) process.send(message, () => {});
};
const fail = (id, e) => send({ id, error: { code: e.code, errno: e.errno, syscall: e.syscall, path: e.path, message: String(e.message) } });
process.on('message', (m) => {
  const fds = [];
  try {
    const stdio = m.stdio.map((path, fd) => {
      if (path === null) return 'ignore';
      const opened = openSync(path, fd === 0 ? constants.O_RDONLY : constants.O_WRONLY);
      fds.push(opened);
      return opened;
    });
    const child = spawn(m.program, m.args, { cwd: m.cwd, env: m.env, argv0: m.argv0, detached: true, stdio });
    child.once('error', (e) => fail(m.id, e));
    child.once('spawn', () => {
      send({ id: m.id, pid: child.pid });
      child.once('exit', (exit, signal) => send({ id: m.id, exit, signal }));
    });
  } catch (e) {
    fail(m.id, e);
  } finally {
    for (const fd of fds) closeSync(fd);
  }
});
send({ ready: true });
`;

export class Spawner {
  private helper: ChildProcess | undefined;
  private ready = false;
  private nextId = 1;
  /** Requests whose exit is still to come, by id; `pid` once the helper reported it. */
  private readonly pending = new Map<number, { callbacks: Pending; pid: number | undefined }>();
  private stopped = false;

  /** True when starts go through the helper; else starts one, for the starts after this. */
  available(): boolean {
    if (this.ready) return true;
    if (this.helper === undefined && !this.stopped) this.launch();
    return false;
  }

  /** Ends the helper (the executor stops); later starts spawn directly. */
  stop(): void {
    this.stopped = true;
    const helper = this.helper;
    if (helper === undefined) return;
    this.lost(helper);
    if (helper.connected) helper.disconnect();
  }

  /** Starts a child through the helper; `exited` follows `started`, or `failed` comes alone. */
  start(request: SpawnerRequest, pending: Pending): void {
    const id = this.nextId++;
    this.pending.set(id, { callbacks: pending, pid: undefined });
    this.helper!.send({ id, ...request }, (error: Error | null) => {
      if (error && this.pending.delete(id)) pending.failed(new SpawnerLostError());
    });
  }

  private launch(): void {
    const helper = spawn(process.execPath, ['-'], {
      stdio: ['pipe', 'ignore', 'ignore', 'ipc'],
      serialization: 'json',
    });
    this.helper = helper;
    helper.stdin?.on('error', () => undefined);
    helper.stdin?.end(HELPER_SOURCE);
    helper.on('message', (reply: Reply) => {
      if (this.helper !== helper) return;
      if ('ready' in reply) this.ready = true;
      else this.receive(reply);
    });
    helper.on('error', () => this.lost(helper));
    helper.once('exit', () => this.lost(helper));
    helper.unref();
    helper.channel?.unref();
  }

  private receive(reply: Exclude<Reply, { ready: true }>): void {
    const entry = this.pending.get(reply.id);
    if (entry === undefined) return;
    if ('pid' in reply) {
      entry.pid = reply.pid;
      entry.callbacks.started(reply.pid);
      return;
    }
    this.pending.delete(reply.id);
    if ('error' in reply) {
      entry.callbacks.failed(Object.assign(new Error(reply.error.message), reply.error));
    } else {
      entry.callbacks.exited(reply.exit, reply.signal);
    }
  }

  /** The helper is gone: its children's exits will not be reported; the next start makes a new one. */
  private lost(helper: ChildProcess): void {
    if (this.helper !== helper) return;
    this.helper = undefined;
    this.ready = false;
    const orphans = [...this.pending.values()];
    this.pending.clear();
    for (const { callbacks, pid } of orphans) {
      if (pid !== undefined) whenGone(pid, () => callbacks.exited(null, null));
      else callbacks.failed(new Error('the process spawner exited while starting the process'));
    }
  }
}

/** How often an orphaned child (its helper died) is checked for being gone. */
const ORPHAN_POLL_MS = 100;

/**
 * Calls `gone` once `pid` has ended: without its helper nobody reports the child's exit to
 * us, so its end is seen as the pid vanishing, or as a zombie nobody reaps yet.
 */
function whenGone(pid: number, gone: () => void): void {
  const timer = setInterval(() => {
    if (!hasEnded(pid)) return;
    clearInterval(timer);
    gone();
  }, ORPHAN_POLL_MS);
  timer.unref();
}

function hasEnded(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state …"; comm may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}
