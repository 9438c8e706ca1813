/**
 * The two ways the executor runs a program (spec §6.2): real pipes (`stdioPipes.ts`), or a
 * pseudo-terminal of 80×24. Both make the child the leader of a new session/process group so
 * signals reach the whole tree (`process.kill(-pid, …)`). Callers see one small interface
 * either way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { spawn as spawnPty } from '@lydell/node-pty';
import type { FifoStock } from './fastpath/fifoStock.js';
import { SpawnerLostError, type Spawner } from './spawner.js';
import { openStdioFifos, openStdioPipes, type StdioFifos, type StdioPipes } from './stdioPipes.js';

export type OutputStream = 'stdout' | 'stderr' | 'pty';

export interface ChildEvents {
  /** One read of the child's output; `bytes` is valid only during the call (stdioPipes.ts). */
  output(stream: OutputStream, bytes: Buffer): void;
  /** The process was reaped; `exitCode` follows the binary's conventions. */
  exit(exitCode: number): void;
  /** Every output stream reached EOF. May come before or after `exit`. */
  streamsEnded(): void;
}

export interface ChildStdin {
  /** Queues `bytes` for the child; false when its stdin is gone. */
  write(bytes: Buffer): boolean;
  /**
   * Resolves once the child has taken the write before the latest one (or its stdin closed);
   * undefined when nothing waits. So one write waits for the child while the previous one is
   * read. A terminal never waits (node-pty reports no drain).
   */
  drained(): Promise<void> | undefined;
}

export interface RunningChild {
  readonly pid: number;
  readonly tty: boolean;
  /** null when the child has no writable stdin (pipe mode without `pipeStdin`). */
  readonly stdin: ChildStdin | null;
  /** Sends a signal to the child's whole process group; throws the OS error. */
  signalGroup(signal: NodeJS.Signals): void;
  /** Closes our end of the child's stdin pipe (the process is being forgotten). */
  release(): void;
  /**
   * Stops reading the child's output (its writes block once the pipe is full), or reads on.
   * For backpressure: the connection the output goes to is backed up.
   */
  setOutputPaused(paused: boolean): void;
}

export interface SpawnRequest {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  arg0: string | null;
  tty: boolean;
  pipeStdin: boolean;
  /** Where pipe mode takes the FIFOs for the child's stdio (the executor-wide stock). */
  fifos: FifoStock;
  /** Starts pipe-mode children outside the executor when ready (spawner.ts); else direct. */
  spawner?: Spawner;
}

/**
 * Output is delivered in blocks of at most this many bytes: one block per read of the pipe or
 * terminal (libuv reads up to 64 KiB). The binary's blocks are 8192 bytes (spec §6.2); larger
 * blocks carry the same bytes in fewer `process/output` notifications
 * (spec/conformance/DIVERGENCES.md, "Output chunks of up to 64 KiB"; spec/server/process.spec.ts).
 */
const OUTPUT_BLOCK_BYTES = 64 * 1024;

function forEachBlock(bytes: Buffer, deliver: (block: Buffer) => void): void {
  for (let offset = 0; offset < bytes.length; offset += OUTPUT_BLOCK_BYTES) {
    deliver(bytes.subarray(offset, offset + OUTPUT_BLOCK_BYTES));
  }
}

function signalGroupOf(pid: number): (signal: NodeJS.Signals) => void {
  return (signal) => {
    try {
      process.kill(-pid, signal);
    } catch (error) {
      // The group may already be gone; a lone leader can still be signalled directly.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      try {
        process.kill(pid, signal);
      } catch {
        /* already reaped */
      }
    }
  };
}

function systemError(code: 'ENOENT' | 'EACCES', syscall: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${syscall} ${code}`);
  error.code = code;
  return error;
}

/** portable-pty's wording when a bare program name is not found on the child's PATH. */
class ProgramNotOnPathError extends Error {
  constructor(program: string, path: string) {
    super(
      `Unable to spawn ${program} because:\nNo viable candidates found in PATH ${JSON.stringify(path)}`,
    );
    this.name = 'ProgramNotOnPathError';
  }
}

/** Resolves a program the way `execvp` does, through the child's PATH. */
function resolveProgram(program: string, cwd: string, env: Record<string, string>): string {
  const candidates = program.includes('/')
    ? [isAbsolute(program) ? program : resolve(cwd, program)]
    : (env.PATH ?? '/usr/bin:/bin')
        .split(delimiter)
        .map((dir) => join(dir === '' ? '.' : dir, program));
  let denied = false;
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EACCES') denied = true;
    }
  }
  if (!denied && !program.includes('/')) throw new ProgramNotOnPathError(program, env.PATH ?? '');
  throw systemError(denied ? 'EACCES' : 'ENOENT', 'spawn');
}

/** The exit code the binary reports: the code, or 128 + the signal number, or -1 (unknown). */
function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  const signalNumber = signal ? (osConstants.signals as Record<string, number>)[signal] : undefined;
  return code ?? (signalNumber !== undefined ? 128 + signalNumber : -1);
}

/** Starts a pipe-mode child: through the spawner once it is ready, else from this process. */
function spawnPipes(request: SpawnRequest, events: ChildEvents): Promise<RunningChild> {
  const spawner = request.spawner;
  return spawner?.available()
    ? spawnThroughSpawner(spawner, request, events)
    : spawnDirectly(request, events);
}

async function spawnThroughSpawner(
  spawner: Spawner,
  request: SpawnRequest,
  events: ChildEvents,
): Promise<RunningChild> {
  const [program, ...args] = request.argv as [string, ...string[]];
  const fifos = await openStdioFifos(request.fifos, request.pipeStdin);
  return new Promise((resolvePromise, reject) => {
    spawner.start(
      {
        program,
        args,
        cwd: request.cwd,
        env: request.env,
        argv0: request.arg0 ?? undefined,
        stdio: fifos.childPaths,
      },
      {
        started: (pid) => {
          fifos.unlink();
          resolvePromise(connectChild(pid, fifos, events));
        },
        failed: (error) => {
          fifos.unlink();
          fifos.closeParentEnds();
          if (error instanceof SpawnerLostError) resolvePromise(spawnDirectly(request, events));
          else reject(error);
        },
        exited: (code, signal) => events.exit(exitCodeOf(code, signal)),
      },
    );
  });
}

async function spawnDirectly(request: SpawnRequest, events: ChildEvents): Promise<RunningChild> {
  const [program, ...args] = request.argv as [string, ...string[]];
  const pipes = await openStdioPipes(request.fifos, request.pipeStdin);
  let child: ChildProcess;
  try {
    child = spawn(program, args, {
      cwd: request.cwd,
      env: request.env,
      argv0: request.arg0 ?? undefined,
      detached: true,
      stdio: pipes.childStdio,
    });
  } catch (error) {
    pipes.closeParentEnds();
    throw error;
  } finally {
    // The child (if any) has its own copies by now; ours would keep its output from ending.
    pipes.closeChildEnds();
  }
  return new Promise((resolvePromise, reject) => {
    child.once('error', (error) => {
      pipes.closeParentEnds();
      reject(error);
    });
    child.once('spawn', () => {
      child.removeAllListeners('error');
      child.on('error', () => undefined);
      child.once('exit', (code, signal) => events.exit(exitCodeOf(code, signal)));
      resolvePromise(connectChild(child.pid as number, pipes, events));
    });
  });
}

/** Our ends of a started child's pipes, wired to `events`. */
function connectChild(
  pid: number,
  pipes: StdioPipes | StdioFifos,
  events: ChildEvents,
): RunningChild {
  const { stdin, stdout, stderr } = pipes.connect((stream, bytes) =>
    forEachBlock(bytes, (block) => events.output(stream, block)),
  );
  let openStreams = 2;
  const streamEnded = (): void => {
    openStreams -= 1;
    if (openStreams === 0) events.streamsEnded();
  };
  for (const readable of [stdout, stderr]) {
    readable.on('error', () => undefined);
    readable.once('close', streamEnded);
  }
  // Unlike Node's own stdin pipe, ours stays open after exit, as on the binary: a
  // background process holding stdin still gets writes until the process is forgotten.
  stdin?.on('error', () => undefined);
  // The two newest writes; each flag is set when the child has taken that write (or the
  // stream failed: Node calls back every queued write then, with an error).
  let latest: StdinWrite | undefined;
  let beforeLatest: StdinWrite | undefined;
  return {
    pid,
    tty: false,
    stdin: stdin
      ? {
          write: (bytes) => {
            if (stdin.destroyed || stdin.writableEnded) return false;
            beforeLatest = latest;
            latest = queueStdinWrite(stdin, bytes);
            return true;
          },
          drained: () =>
            beforeLatest === undefined || beforeLatest.taken ? undefined : beforeLatest.done,
        }
      : null,
    signalGroup: signalGroupOf(pid),
    release: () => stdin?.destroy(),
    setOutputPaused: (paused) => {
      for (const readable of [stdout, stderr]) {
        if (paused) readable.pause();
        else readable.resume();
      }
    },
  };
}

/** One write to a child's stdin: `done` resolves, and `taken` is set, once the child took it. */
interface StdinWrite {
  taken: boolean;
  readonly done: Promise<void>;
}

function queueStdinWrite(stdin: Writable, bytes: Buffer): StdinWrite {
  let resolveDone!: () => void;
  const write: StdinWrite = {
    taken: false,
    done: new Promise<void>((resolve) => (resolveDone = resolve)),
  };
  stdin.write(bytes, () => {
    write.taken = true;
    resolveDone();
  });
  return write;
}

function spawnTerminal(request: SpawnRequest, events: ChildEvents): Promise<RunningChild> {
  // On the PTY path the executed program is `arg0 ?? argv[0]` (a quirk of the Rust executor).
  const program = request.arg0 ?? (request.argv[0] as string);
  statSync(request.cwd); // a missing cwd is a spawn error, as with pipes
  resolveProgram(program, request.cwd, request.env);
  // node-pty always injects TERM and PWD; `env -u` removes them again unless the caller set them.
  const unset = ['TERM', 'PWD']
    .filter((name) => !(name in request.env))
    .flatMap((name) => ['-u', name]);
  const terminal = spawnPty('/usr/bin/env', [...unset, '--', program, ...request.argv.slice(1)], {
    cols: 80,
    rows: 24,
    cwd: request.cwd,
    env: request.env,
    encoding: null,
  });
  terminal.onData((data) =>
    forEachBlock(Buffer.from(data as unknown as Uint8Array), (block) =>
      events.output('pty', block),
    ),
  );
  // Known limit: node-pty emits exit once the terminal's socket has closed (all output read),
  // or, if that takes over 200 ms after the child was reaped, destroys the socket, dropping
  // output not yet read. An event loop stalled that long just then (seen twice in the test
  // suite on a loaded 2-core machine, never outside it) loses a tty process's last output.
  terminal.onExit(({ exitCode, signal }) => {
    // portable-pty reports death by signal as exit code 1.
    events.exit(signal ? 1 : exitCode);
    events.streamsEnded();
  });
  let alive = true;
  terminal.onExit(() => {
    alive = false;
  });
  return Promise.resolve({
    pid: terminal.pid,
    tty: true,
    stdin: {
      write: (bytes) => {
        if (!alive) return false;
        terminal.write(bytes as unknown as string);
        return true;
      },
      drained: () => undefined,
    },
    signalGroup: signalGroupOf(terminal.pid),
    release: () => undefined,
    setOutputPaused: (paused) => {
      if (!alive) return;
      if (paused) terminal.pause();
      else terminal.resume();
    },
  });
}

/** Starts the program; rejects with the OS error when it cannot be started. */
export function spawnChild(request: SpawnRequest, events: ChildEvents): Promise<RunningChild> {
  try {
    return request.tty ? spawnTerminal(request, events) : spawnPipes(request, events);
  } catch (error) {
    return Promise.reject(error);
  }
}
