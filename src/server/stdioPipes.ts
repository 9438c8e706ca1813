/**
 * Real pipes for a pipe-mode child's stdin/stdout/stderr, as the Rust executor gives it.
 * Node's `stdio: 'pipe'` makes UNIX socketpairs instead, which children can tell apart:
 * `echo x > /dev/stdout` fails (ENXIO), `[ -p /dev/fd/1 ]` is false, and bash with a socket
 * on stdin reads ~/.bashrc as if started by rshd.
 *
 * Node cannot call pipe(2), so each pipe is a FIFO from the executor's `FifoStock`, opened
 * twice and unlinked at once: the child's end in blocking mode (passed as a numeric `stdio`
 * fd, which libuv dup2()s onto 0/1/2), ours non-blocking and wrapped in `net.Socket({ fd })`,
 * which libuv drives from the event loop like any pipe (no thread-pool reads, unlike
 * `fs.createReadStream`). Node opens every fd O_CLOEXEC, so no other child inherits one.
 */
import { closeSync, constants as fs, openSync, unlinkSync } from 'node:fs';
import { Socket, type OnReadOpts, type SocketConstructorOpts } from 'node:net';
import type { FifoStock } from './fastpath/fifoStock.js';

/** Our ends of a child's pipes. */
interface ParentEnds {
  /**
   * Our ends as event-loop streams; call once, after the child started. The output ends hand
   * each read to `onOutput` instead of emitting 'data' (see `READ_BUFFER`).
   */
  connect(onOutput: OutputReader): { stdin: Socket | null; stdout: Socket; stderr: Socket };
  /** Closes our ends instead, when the child never started. */
  closeParentEnds(): void;
}

/** The pipes with the child's ends open here, for a `spawn` from this process. */
export interface StdioPipes extends ParentEnds {
  /** The child's ends, for `spawn`'s `stdio` (stdin is /dev/null without `pipeStdin`). */
  readonly childStdio: ['ignore' | number, number, number];
  /** Closes our copies of the child's ends; call as soon as `spawn` has returned. */
  closeChildEnds(): void;
}

/** The pipes with only our ends open: the spawner (spawner.ts) opens the child's by path. */
export interface StdioFifos extends ParentEnds {
  /** The FIFOs for the child's fds 0, 1, 2 (stdin null without `pipeStdin`). */
  readonly childPaths: [string | null, string, string];
  /** Removes the FIFOs' names; call once the child's ends are open (or will never be). */
  unlink(): void;
}

/**
 * Receives one read of a child's stdout or stderr. `bytes` is a view of the shared read buffer:
 * valid only during the call (copy what must outlive it).
 */
export type OutputReader = (stream: 'stdout' | 'stderr', bytes: Buffer) => void;

/**
 * The one buffer every child's output is read into (`net.Socket`'s `onread`), 64 KiB like
 * libuv's own reads. Without it each read is a new 64 KiB buffer that lives until V8 next
 * collects, so a fast writer grows the malloc heap by megabytes of garbage, which every later
 * `fork` of the executor pays for (`spawn` copies its page tables). Sharing it is safe because
 * a read is handed on synchronously and the next read only happens after it returned.
 * Guarded by spec/server/processStdio.spec.ts ("output of concurrent children").
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/**
 * Opens our end of the FIFO so that no open blocks: for output, a non-blocking reader (it
 * needs no writer); for stdin, a placeholder reader lets our non-blocking write end open.
 * With `child`, then opens the child's end against ours (for stdin before the placeholder
 * closes); without, the child's end is opened later by path, against our end.
 */
function openFifo(
  path: string,
  direction: 'fromChild' | 'toChild',
  opened: number[],
  child: boolean,
): { ours: number; child: number | undefined } {
  const open = (flags: number): number => {
    const fd = openSync(path, flags);
    opened.push(fd);
    return fd;
  };
  if (direction === 'fromChild') {
    const ours = open(fs.O_RDONLY | fs.O_NONBLOCK);
    return { ours, child: child ? open(fs.O_WRONLY) : undefined };
  }
  const placeholder = open(fs.O_RDONLY | fs.O_NONBLOCK);
  const ours = open(fs.O_WRONLY | fs.O_NONBLOCK);
  const childEnd = child ? open(fs.O_RDONLY) : undefined;
  opened.splice(opened.indexOf(placeholder), 1);
  closeSync(placeholder);
  return { ours, child: childEnd };
}

function outputSocket(fd: number, stream: 'stdout' | 'stderr', onOutput: OutputReader): Socket {
  // `onread` is a documented option of `new net.Socket()` (Node ≥ 15.8) missing from its types.
  const options: SocketConstructorOpts & { onread: OnReadOpts } = {
    fd,
    readable: true,
    writable: false,
    onread: {
      buffer: READ_BUFFER,
      callback: (bytesRead) => {
        onOutput(stream, READ_BUFFER.subarray(0, bytesRead));
        return true;
      },
    },
  };
  return new Socket(options);
}

function closeAll(fds: readonly number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      /* already closed */
    }
  }
}

function unlinkAll(paths: readonly string[]): void {
  for (const path of paths) {
    try {
      unlinkSync(path);
    } catch {
      /* already gone */
    }
  }
}

function openFifos(paths: readonly string[], pipeStdin: boolean, child: true): StdioPipes;
function openFifos(paths: readonly string[], pipeStdin: boolean, child: false): StdioFifos;
function openFifos(
  paths: readonly string[],
  pipeStdin: boolean,
  child: boolean,
): StdioPipes | StdioFifos {
  const opened: number[] = [];
  let keepNames = false;
  try {
    const [stdoutPath, stderrPath, stdinPath] = paths as [string, string, string?];
    const stdout = openFifo(stdoutPath, 'fromChild', opened, child);
    const stderr = openFifo(stderrPath, 'fromChild', opened, child);
    const stdin = pipeStdin && stdinPath ? openFifo(stdinPath, 'toChild', opened, child) : null;
    const parent: ParentEnds = {
      connect: (onOutput) => ({
        stdin: stdin ? new Socket({ fd: stdin.ours, readable: false, writable: true }) : null,
        stdout: outputSocket(stdout.ours, 'stdout', onOutput),
        stderr: outputSocket(stderr.ours, 'stderr', onOutput),
      }),
      closeParentEnds: () => closeAll([stdout.ours, stderr.ours, ...(stdin ? [stdin.ours] : [])]),
    };
    if (!child) {
      keepNames = true;
      return {
        ...parent,
        childPaths: [stdin ? (stdinPath as string) : null, stdoutPath, stderrPath],
        unlink: () => unlinkAll(paths),
      };
    }
    let childEndsOpen = true;
    return {
      ...parent,
      childStdio: [stdin?.child ?? 'ignore', stdout.child as number, stderr.child as number],
      closeChildEnds: () => {
        if (!childEndsOpen) return;
        childEndsOpen = false;
        closeAll([stdout.child, stderr.child, stdin?.child].filter((fd) => fd !== undefined));
      },
    };
  } catch (error) {
    closeAll(opened);
    throw error;
  } finally {
    if (!keepNames) unlinkAll(paths);
  }
}

/** Takes FIFOs from `stock`, retrying once with a fresh stock if they vanished. */
async function takeFifos<T>(
  stock: FifoStock,
  pipeStdin: boolean,
  open: (paths: readonly string[]) => T,
): Promise<T> {
  const count = pipeStdin ? 3 : 2;
  try {
    return open(await stock.take(count));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    stock.discard();
    return open(await stock.take(count));
  }
}

/** Takes FIFOs from `stock` and opens both ends of each. */
export function openStdioPipes(stock: FifoStock, pipeStdin: boolean): Promise<StdioPipes> {
  return takeFifos(stock, pipeStdin, (paths) => openFifos(paths, pipeStdin, true));
}

/** Takes FIFOs from `stock` and opens our ends only; the child's stay to be opened by path. */
export function openStdioFifos(stock: FifoStock, pipeStdin: boolean): Promise<StdioFifos> {
  return takeFifos(stock, pipeStdin, (paths) => openFifos(paths, pipeStdin, false));
}
