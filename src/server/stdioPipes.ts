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

export interface StdioPipes {
  /** The child's ends, for `spawn`'s `stdio` (stdin is /dev/null without `pipeStdin`). */
  readonly childStdio: ['ignore' | number, number, number];
  /** Closes our copies of the child's ends; call as soon as `spawn` has returned. */
  closeChildEnds(): void;
  /**
   * Our ends as event-loop streams; call once, after the child started. The output ends hand
   * each read to `onOutput` instead of emitting 'data' (see `READ_BUFFER`).
   */
  connect(onOutput: OutputReader): { stdin: Socket | null; stdout: Socket; stderr: Socket };
  /** Closes our ends instead, when the child never started. */
  closeParentEnds(): void;
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

interface PipeEnds {
  ours: number;
  child: number;
}

/**
 * Opens the FIFO so that neither open blocks: for output, our read end first (a non-blocking
 * reader needs no writer), then the child's write end; for stdin, a placeholder reader lets
 * our non-blocking write end open, then the child's read end opens against our writer.
 */
function openFifo(path: string, direction: 'fromChild' | 'toChild', opened: number[]): PipeEnds {
  const open = (flags: number): number => {
    const fd = openSync(path, flags);
    opened.push(fd);
    return fd;
  };
  if (direction === 'fromChild') {
    const ours = open(fs.O_RDONLY | fs.O_NONBLOCK);
    return { ours, child: open(fs.O_WRONLY) };
  }
  const placeholder = open(fs.O_RDONLY | fs.O_NONBLOCK);
  const ours = open(fs.O_WRONLY | fs.O_NONBLOCK);
  const child = open(fs.O_RDONLY);
  opened.splice(opened.indexOf(placeholder), 1);
  closeSync(placeholder);
  return { ours, child };
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

function openFifos(paths: readonly string[], pipeStdin: boolean): StdioPipes {
  const opened: number[] = [];
  try {
    const [stdoutPath, stderrPath, stdinPath] = paths as [string, string, string?];
    const stdout = openFifo(stdoutPath, 'fromChild', opened);
    const stderr = openFifo(stderrPath, 'fromChild', opened);
    const stdin = pipeStdin && stdinPath ? openFifo(stdinPath, 'toChild', opened) : null;
    let childEndsOpen = true;
    return {
      childStdio: [stdin?.child ?? 'ignore', stdout.child, stderr.child],
      closeChildEnds: () => {
        if (!childEndsOpen) return;
        childEndsOpen = false;
        closeAll([stdout.child, stderr.child, ...(stdin ? [stdin.child] : [])]);
      },
      connect: (onOutput) => ({
        stdin: stdin ? new Socket({ fd: stdin.ours, readable: false, writable: true }) : null,
        stdout: outputSocket(stdout.ours, 'stdout', onOutput),
        stderr: outputSocket(stderr.ours, 'stderr', onOutput),
      }),
      closeParentEnds: () => closeAll([stdout.ours, stderr.ours, ...(stdin ? [stdin.ours] : [])]),
    };
  } catch (error) {
    closeAll(opened);
    throw error;
  } finally {
    for (const path of paths) {
      try {
        unlinkSync(path);
      } catch {
        /* already gone */
      }
    }
  }
}

/** Takes FIFOs from `stock` and opens them; retries once with a fresh stock if they vanished. */
export async function openStdioPipes(stock: FifoStock, pipeStdin: boolean): Promise<StdioPipes> {
  const count = pipeStdin ? 3 : 2;
  try {
    return openFifos(await stock.take(count), pipeStdin);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    stock.discard();
    return openFifos(await stock.take(count), pipeStdin);
  }
}
