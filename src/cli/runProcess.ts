/**
 * The work behind `execrx run`: connect to the endpoint, start the process, stream it, map
 * signals, and come back with the exit status.
 */
import { posix } from 'node:path';
import { firstValueFrom, type Subscription } from 'rxjs';
import type { ExecServerClient, ProcessHandle } from '../client/index.js';
import { ConnectionAttemptError } from '../environment/errors.js';
import type { ExecEnvPolicy } from '../protocol/process.js';
import { fileUriToPath } from '../protocol/pathUri.js';
import type { CliStreams } from './command.js';
import type { Endpoint, EndpointTarget } from './endpoint.js';
import { forwardStdin } from './forwardStdin.js';
import { statusLine, type StatusLine } from './statusLine.js';

const EXIT_INTERRUPTED = 130;
const EXIT_TERMINATED = 143;

/** A parsed `execrx run` command line. */
export interface RunRequest {
  readonly target: EndpointTarget;
  readonly tty: boolean;
  readonly cwd: string | undefined;
  readonly env: Record<string, string>;
  readonly inherit: ExecEnvPolicy['inherit'];
  readonly pipeStdin: boolean;
  readonly argv: readonly string[];
}

/**
 * Runs `request` on `endpoint` (opened for `request.target`, closed here) and resolves with
 * the exit status for our own process.
 */
export async function runProcess(
  endpoint: Endpoint,
  request: RunRequest,
  streams: CliStreams,
): Promise<number> {
  try {
    return await runOn(endpoint, request, streams);
  } catch (error) {
    if (error instanceof Interrupted) return error.exitCode;
    throw error;
  } finally {
    await endpoint.close();
  }
}

async function runOn(
  endpoint: Endpoint,
  request: RunRequest,
  streams: CliStreams,
): Promise<number> {
  const status = statusLine(streams.stderr);
  const interrupts = interruptTracker();
  try {
    status.show(`connecting to ${endpoint.label}…`);
    // The environment layer connects, resumes the session after a transport loss (within
    // 25 s, retrying retryable errors), and fails it when that is impossible.
    const environment = endpoint.open();
    const client = await interrupts
      .race(firstValueFrom(environment.get()))
      .catch((error: unknown) => {
        environment.close();
        throw error instanceof ConnectionAttemptError ? asError(error.cause) : error;
      });
    status.clear();
    const reconnecting = showReconnects(client, endpoint, status);
    try {
      const cwd = await interrupts.race(resolveCwd(client, request.cwd));
      const handle = await interrupts.race(
        firstValueFrom(
          client.startProcess({
            argv: request.argv,
            cwd,
            env: request.env,
            envPolicy: {
              inherit: request.inherit,
              ignoreDefaultExcludes: false,
              exclude: [],
              set: {},
              includeOnly: [],
            },
            tty: request.tty,
            pipeStdin: request.pipeStdin,
          }),
        ).catch((error: unknown) => {
          throw new Error(`cannot start \`${request.argv[0]}\`: ${messageOf(error)}`);
        }),
      );
      return await streamProcess(client, handle, request, streams, interrupts);
    } catch (error) {
      if (client.state === 'failed' && !(error instanceof Interrupted)) {
        throw new Error(`could not reconnect to ${endpoint.label}: ${messageOf(error)}`);
      }
      throw error;
    } finally {
      reconnecting.unsubscribe();
      environment.close();
    }
  } finally {
    status.clear();
    interrupts.dispose();
  }
}

/** "reconnecting…" on a terminal while the session recovers. */
function showReconnects(
  client: ExecServerClient,
  endpoint: Endpoint,
  status: StatusLine,
): Subscription {
  return client.state$.subscribe((state) => {
    if (state === 'recovering') status.show(`connection to ${endpoint.label} lost; reconnecting…`);
    else status.clear();
  });
}

/** Output to our stdout/stderr as it arrives; resolves with the exit code once `closed`. */
async function streamProcess(
  client: ExecServerClient,
  handle: ProcessHandle,
  request: RunRequest,
  streams: CliStreams,
  interrupts: InterruptTracker,
): Promise<number> {
  const rawTerminal =
    request.tty && streams.stdin.isTTY === true && streams.stdin.setRawMode !== undefined;
  // In raw mode Ctrl-C reaches the remote terminal as a byte, like ssh -t.
  if (rawTerminal) streams.stdin.setRawMode?.(true);
  const stdin =
    request.pipeStdin || request.tty ? forwardStdin(streams.stdin, handle, request) : undefined;
  interrupts.onInterrupt((count) => {
    if (count === 1) handle.signal('interrupt').subscribe({ error: () => undefined });
    else handle.terminate().subscribe({ error: () => undefined });
  });
  interrupts.onTerminate(() => handle.terminate().subscribe({ error: () => undefined }));
  const flow = outputFlow(client);
  try {
    let exitCode: number | undefined;
    await new Promise<void>((resolve, reject) => {
      handle.events$.subscribe({
        next: (event) => {
          if (event.type === 'output') {
            flow.write(event.stream === 'stderr' ? streams.stderr : streams.stdout, event.chunk);
          } else if (event.type === 'exited') {
            exitCode = event.exitCode;
          }
        },
        error: reject,
        complete: resolve,
      });
    });
    await flush(streams);
    if (interrupts.terminated) return EXIT_TERMINATED;
    return toExitStatus(exitCode);
  } finally {
    flow.dispose();
    stdin?.stop();
    if (rawTerminal) streams.stdin.setRawMode?.(false);
  }
}

/**
 * Output written with flow control: while our stdout or stderr holds more than its buffer
 * (`write` returned false, e.g. a pipe into a slow reader), the client stops reading from the
 * executor until it drains, so the CLI's memory stays bounded whatever the output's size
 * (spec/cli/runFlowControl.spec.ts).
 */
function outputFlow(client: ExecServerClient): {
  write(sink: CliStreams['stdout'], chunk: Uint8Array): void;
  dispose(): void;
} {
  // The sinks over their buffer, each with the 'drain' listener that takes it out.
  const full = new Map<CliStreams['stdout'], () => void>();
  return {
    write(sink, chunk) {
      if (sink.write(chunk) || full.has(sink)) return;
      if (full.size === 0) client.pauseReading();
      const onDrain = (): void => {
        full.delete(sink);
        if (full.size === 0) client.resumeReading();
      };
      full.set(sink, onDrain);
      sink.once('drain', onDrain);
    },
    dispose() {
      for (const [sink, onDrain] of full) sink.off('drain', onDrain);
      full.clear();
    },
  };
}

/** Exit statuses outside 0..255 (the executor's -1 "unknown") become 1. */
function toExitStatus(exitCode: number | undefined): number {
  if (exitCode === undefined || exitCode < 0 || exitCode > 255) return 1;
  return exitCode;
}

async function resolveCwd(client: ExecServerClient, cwd: string | undefined): Promise<string> {
  if (cwd !== undefined && cwd.startsWith('/')) return cwd;
  const info = await firstValueFrom(client.environmentInfo());
  if (info.cwd == null) {
    if (cwd === undefined)
      throw new Error('the executor did not report its working directory; pass --cwd');
    throw new Error(`--cwd must be absolute: the executor did not report its working directory`);
  }
  const base = fileUriToPath(info.cwd);
  return cwd === undefined ? base : posix.resolve(base, cwd);
}

function flush(streams: CliStreams): Promise<void> {
  const drained = (stream: CliStreams['stdout']) =>
    new Promise<void>((resolve) => stream.write('', () => resolve()));
  return Promise.all([drained(streams.stdout), drained(streams.stderr)]).then(() => undefined);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Thrown (and turned into exit 130/143) when Ctrl-C or SIGTERM arrives before the process runs. */
class Interrupted extends Error {
  constructor(readonly exitCode: number) {
    super('interrupted');
  }
}

interface InterruptTracker {
  readonly terminated: boolean;
  /** Rejects with Interrupted when a signal arrives before `promise` settles. */
  race<T>(promise: Promise<T>): Promise<T>;
  /** Once the process runs: Ctrl-C number `count` (1, 2, …). */
  onInterrupt(handler: (count: number) => void): void;
  onTerminate(handler: () => void): void;
  dispose(): void;
}

/** SIGINT/SIGTERM/SIGHUP handling for the whole run (installed so Node does not just exit). */
function interruptTracker(): InterruptTracker {
  let interruptHandler: ((count: number) => void) | undefined;
  let terminateHandler: (() => void) | undefined;
  let pendingRejects: Array<(error: Interrupted) => void> = [];
  let interrupts = 0;
  let terminated = false;
  const abortPending = (exitCode: number): void => {
    for (const reject of pendingRejects) reject(new Interrupted(exitCode));
    pendingRejects = [];
  };
  const onSigint = (): void => {
    interrupts++;
    if (interruptHandler) interruptHandler(interrupts);
    else abortPending(EXIT_INTERRUPTED);
  };
  const onSigterm = (): void => {
    terminated = true;
    if (terminateHandler) terminateHandler();
    else abortPending(EXIT_TERMINATED);
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  process.on('SIGHUP', onSigterm);
  return {
    get terminated() {
      return terminated;
    },
    race(promise) {
      return new Promise((resolve, reject) => {
        pendingRejects.push(reject);
        promise.then(resolve, reject).finally(() => {
          pendingRejects = pendingRejects.filter((candidate) => candidate !== reject);
        });
      });
    },
    onInterrupt(handler) {
      interruptHandler = handler;
    },
    onTerminate(handler) {
      terminateHandler = handler;
    },
    dispose() {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigterm);
      process.off('SIGHUP', onSigterm);
    },
  };
}
