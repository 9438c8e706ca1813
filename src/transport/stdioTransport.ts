/**
 * The stdio transport (spec/protocol.md §1.1, §1.2): newline-delimited JSON, one message per
 * line, `\n` or `\r\n` endings, blank lines skipped. Also spawns an exec-server child
 * (`codex exec-server --listen stdio`) and owns its lifetime.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import {
  asyncScheduler,
  Observable,
  ReplaySubject,
  Subject,
  timer,
  type SchedulerLike,
} from 'rxjs';
import {
  ConnectError,
  DisconnectedError,
  DisconnectReason,
  MessageTooLargeError,
} from '../protocol/errors.js';
import { errorMessage } from './errorMessage.js';
import type { Transport } from './transport.js';

/** Longest accepted inbound line (`MAX_STDIO_JSONRPC_MESSAGE_LEN`, 64 MiB). */
export const MAX_STDIO_LINE_BYTES = 64 * 1024 * 1024;
/** Time a spawned child gets between SIGTERM and SIGKILL (`STDIO_TERMINATION_GRACE_PERIOD`). */
const STDIO_TERMINATION_GRACE_MS = 2_000;

const NEWLINE = 0x0a;

/** Bounds and naming of a stdio transport. */
export interface StdioTransportOptions {
  /** Longest inbound line in bytes; a longer one disconnects. Default 64 MiB. */
  maxLineBytes?: number;
  /** Names the peer in error texts. Default `exec-server stdio`. */
  label?: string;
}

/**
 * Wraps a readable+writable pair. Lines are held until their newline arrives; a final line
 * without a newline is still delivered at end of input. `incoming$` completes at end of input
 * and errors with `DisconnectedError` on a stream error or an oversize line.
 */
export function fromStdio(
  input: Readable,
  output: Writable,
  options: StdioTransportOptions = {},
): Transport {
  const maxLineBytes = options.maxLineBytes ?? MAX_STDIO_LINE_BYTES;
  const label = options.label ?? 'exec-server stdio';
  const incoming = new Subject<string>();
  let partial: Buffer[] = [];
  let partialBytes = 0;
  let finished = false;

  const emitLine = (line: Buffer): void => {
    const text = line.toString('utf8').replace(/\r$/, '');
    if (text.trim().length === 0) return;
    incoming.next(text);
  };
  const finish = (error?: Error): void => {
    if (finished) return;
    finished = true;
    input.off('data', onData);
    partial = [];
    if (error) incoming.error(error);
    else incoming.complete();
  };
  const onData = (chunk: Buffer | string): void => {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let newline = bytes.indexOf(NEWLINE);
    while (newline !== -1 && !finished) {
      const head = bytes.subarray(0, newline);
      if (partialBytes + head.length > maxLineBytes) return failOversize();
      emitLine(partial.length === 0 ? head : Buffer.concat([...partial, head]));
      partial = [];
      partialBytes = 0;
      bytes = bytes.subarray(newline + 1);
      newline = bytes.indexOf(NEWLINE);
    }
    if (finished || bytes.length === 0) return;
    if (partialBytes + bytes.length > maxLineBytes) return failOversize();
    partial.push(bytes);
    partialBytes += bytes.length;
  };
  const failOversize = (): void => {
    finish(
      new DisconnectedError(
        `${DisconnectReason.transportDisconnected}: JSON-RPC message from ${label} exceeds maximum length of ${maxLineBytes} bytes`,
      ),
    );
    input.destroy();
  };

  input.on('data', onData);
  input.once('end', () => {
    if (partial.length > 0) emitLine(Buffer.concat(partial));
    finish();
  });
  input.once('close', () => finish());
  input.on('error', (error: Error) =>
    finish(
      new DisconnectedError(`${DisconnectReason.transportDisconnected}: ${error.message}`, {
        cause: error,
      }),
    ),
  );
  // A peer that went away makes writes fail with EPIPE; the input side reports the loss.
  output.on('error', () => undefined);

  return {
    incoming$: incoming.asObservable(),
    send(message: string): void {
      if (finished || output.writableEnded || output.destroyed) return;
      output.write(`${message}\n`);
    },
    close(): void {
      if (finished) return;
      finish();
      output.end();
      input.destroy();
    },
  };
}

/** How a spawned child ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A Transport to a spawned child, with the child's identity and end. */
export interface SpawnedStdioTransport extends Transport {
  readonly pid: number;
  /** Emits once when the child has exited, then completes; replays to late subscribers. */
  readonly exit$: Observable<ChildExit>;
}

/**
 * How `spawnStdioTransport` starts the child, and how it stops it on close (SIGTERM, then SIGKILL).
 */
export interface SpawnStdioOptions extends StdioTransportOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Receives the child's stderr text; without it stderr is discarded. */
  onStderr?: (text: string) => void;
  /** SIGTERM → SIGKILL grace period on close. Default 2 s. */
  terminationGraceMs?: number;
  /** Scheduler for the grace period. */
  scheduler?: SchedulerLike;
}

/**
 * Spawns an exec-server child speaking JSON-RPC on its stdio (e.g. `codex exec-server --listen
 * stdio`). Cold: each subscription spawns one child and emits its Transport once it started.
 * Closing the transport (or unsubscribing before the emission) terminates the child's process
 * group: SIGTERM, then SIGKILL after the grace period. Spawn failure → `ConnectError`.
 */
export function spawnStdioTransport(
  command: string,
  args: readonly string[],
  options: SpawnStdioOptions = {},
): Observable<SpawnedStdioTransport> {
  return new Observable<SpawnedStdioTransport>((subscriber) => {
    const ownGroup = process.platform !== 'win32';
    let child: ChildProcess;
    try {
      child = spawn(command, args, {
        cwd: options.cwd,
        env: options.env,
        stdio: ['pipe', 'pipe', options.onStderr ? 'pipe' : 'ignore'],
        detached: ownGroup,
      });
    } catch (error) {
      subscriber.error(spawnError(error));
      return undefined;
    }
    let emitted = false;
    const exit = new ReplaySubject<ChildExit>(1);
    child.once('exit', (code, signal) => {
      exit.next({ code, signal });
      exit.complete();
    });
    const terminate = (): void => terminateChild(child, ownGroup, options);
    if (options.onStderr) {
      const onStderr = options.onStderr;
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (text: string) => onStderr(text));
    }
    child.once('error', (error) => {
      if (!emitted) subscriber.error(spawnError(error));
    });
    child.once('spawn', () => {
      const { stdin, stdout, pid } = child;
      if (!stdin || !stdout || pid === undefined) {
        terminate();
        return subscriber.error(spawnError(new Error('child has no stdio pipes')));
      }
      const inner = fromStdio(stdout, stdin, options);
      emitted = true;
      subscriber.next({
        pid,
        exit$: exit.asObservable(),
        incoming$: inner.incoming$,
        send: (message) => {
          // The executor reads lines of at most 64 MiB and exits on a longer one (0.169.0):
          // such a message fails its call here, with nothing sent.
          const bytes = Buffer.byteLength(message);
          if (bytes > MAX_STDIO_LINE_BYTES)
            throw new MessageTooLargeError(bytes, MAX_STDIO_LINE_BYTES);
          inner.send(message);
        },
        close: () => {
          inner.close();
          terminate();
        },
      });
      subscriber.complete();
    });
    return () => {
      if (!emitted) terminate();
    };
  });
}

function terminateChild(child: ChildProcess, ownGroup: boolean, options: SpawnStdioOptions): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const signal = (name: NodeJS.Signals): void => {
    try {
      if (ownGroup && child.pid !== undefined) process.kill(-child.pid, name);
      else child.kill(name);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const escalation = timer(
    options.terminationGraceMs ?? STDIO_TERMINATION_GRACE_MS,
    options.scheduler ?? asyncScheduler,
  ).subscribe(() => signal('SIGKILL'));
  child.once('exit', () => escalation.unsubscribe());
}

function spawnError(error: unknown): ConnectError {
  return new ConnectError(`failed to spawn exec-server: ${errorMessage(error)}`, { cause: error });
}
