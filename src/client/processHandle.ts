/**
 * A process started through `ExecServerClient.startProcess` (spec/protocol.md §6, §11.4).
 * Bound to the session that started it: after that session is retired or fails, every
 * observable of the handle errors with DisconnectedError; it never migrates to another session.
 */
import { decodeValidatedBase64 } from '../protocol/base64.js';
import { Observable, filter, map } from 'rxjs';
import { ProcessWriteRejectedError } from '../protocol/errors.js';
import type { ProcessReadResult, ProcessSignal, SandboxType } from '../protocol/process.js';
import type { NetworkPolicyDecisionNotification } from '../protocol/network.js';
import type { NetworkPolicyPrompt } from './networkPolicyPrompts.js';
import type { ProcessEvent, ProcessOutputEvent, ProcessReadResponse } from './processEvents.js';
import type { ProcessRecord, SessionCore } from './sessionCore.js';
import { processWriteParams } from '../rpc/fastpath/requestText.js';

export type { ProcessReadResponse } from './processEvents.js';

/** Options of `ProcessHandle.read` (`process/read`). */
export interface ProcessReadOptions {
  /** Return output with `seq > afterSeq` (default 0: everything retained). */
  readonly afterSeq?: number;
  /** Byte budget of the reply; at least one chunk is always returned. Default unlimited. */
  readonly maxBytes?: number;
  /** Long-poll up to this many ms for something new (default 0). Blocks the executor's connection while waiting. */
  readonly waitMs?: number;
}

/**
 * A process started through `ExecServerClient.startProcess`: its output and exit as observables,
 * and `write`, `signal`, `terminate`. Bound to its session: after that session is retired or fails,
 * every observable errors with `DisconnectedError`.
 */
export class ProcessHandle {
  private nextWriteId = 1;

  /** @internal Created by `ExecServerClient.startProcess`. */
  constructor(
    private readonly core: SessionCore,
    private readonly record: ProcessRecord,
    /** What the executor reported (`null` when a legacy executor did not say). */
    readonly sandboxType: SandboxType | null,
  ) {}

  /** The client-chosen process id (not an OS pid). */
  get processId(): string {
    return this.record.processId;
  }

  /**
   * Output, exit and close events, in `seq` order, each exactly once. A late subscriber first
   * receives the retained history (the newest 256 events / 1 MiB of output), then live events.
   * Completes after `closed`; errors with ProcessFailedError when the client could not keep
   * the stream consistent, or DisconnectedError when the session ends.
   */
  get events$(): Observable<ProcessEvent> {
    return this.core.calls.guardStream(this.record.log.events$);
  }

  /**
   * This process's `network/policyRequest`s while you watch (hot): answer each prompt with
   * `allow()`, `deny(reason)` or `ask(reason)` before its `deadline`, or deny `not_allowed` is
   * sent for you. Requests that arrive while nobody watches go to the client's default policy.
   * A pending prompt is denied when the process ends and dropped (`outcome$` says `cancelled`)
   * when the session is retired or its transport lost. Completes when the process ends.
   */
  get networkPolicyRequests$(): Observable<NetworkPolicyPrompt> {
    return this.record.policy.requests$;
  }

  /** The executor's `network/policyDecision` audit records for this process (hot). */
  get networkPolicyDecisions$(): Observable<NetworkPolicyDecisionNotification> {
    const processId = this.processId;
    return this.core.notifications.policyDecisions$.pipe(
      filter((record) => record.processId === processId),
    );
  }

  /** Bytes written to stdout (and, for `tty: true`, everything the terminal printed). */
  get stdout$(): Observable<Uint8Array> {
    return this.outputOf('stdout', 'pty');
  }

  /** Bytes written to stderr (nothing for `tty: true`: the terminal merges both streams). */
  get stderr$(): Observable<Uint8Array> {
    return this.outputOf('stderr');
  }

  /** The exit code, once, when the process has been reaped (output may still follow). */
  get exit$(): Observable<number> {
    return this.core.calls.guardStream(this.record.log.exitCode$);
  }

  /**
   * Writes bytes (or UTF-8 text) to stdin. Each call takes a fresh `writeId`; when the
   * transport drops mid-write the same `writeId` is re-sent after the session resumes, so the
   * executor writes the bytes exactly once. Errors with ProcessWriteRejectedError when the
   * executor does not accept the write (e.g. `stdinClosed` without `pipeStdin`/`tty`).
   */
  write(data: Uint8Array | string): Observable<void> {
    const writeId = String(this.nextWriteId++);
    const params = processWriteParams(this.processId, data, writeId);
    return this.core.calls.call('process/write', params, { recovery: 'resend' }).pipe(
      map(({ status }) => {
        if (status !== 'accepted') throw new ProcessWriteRejectedError(this.processId, status);
      }),
    );
  }

  /** Sends SIGINT to the process group (`interrupt` is the only signal the protocol has). */
  signal(signal: ProcessSignal = 'interrupt'): Observable<void> {
    return this.core.calls
      .call('process/signal', { processId: this.processId, signal })
      .pipe(map(() => undefined));
  }

  /**
   * SIGKILLs the process group. Emits whether the process was still running. Exit and close
   * events still follow (exit code 137 on the 0.169.0 executor).
   */
  terminate(): Observable<boolean> {
    return this.core.calls
      .call('process/terminate', { processId: this.processId })
      .pipe(map(({ running }) => running));
  }

  /**
   * Polls retained output (`process/read`). Re-issued on the resumed transport if the
   * connection drops. When this process's event stream already failed on the client, the
   * reply is synthesized: no chunks, `exited` and `closed` true, and `failure` set.
   */
  read(options: ProcessReadOptions = {}): Observable<ProcessReadResponse> {
    return new Observable<ProcessReadResponse>((subscriber) => {
      const failure = this.record.log.failure;
      if (failure !== undefined && this.core.lifecycle.terminalError === undefined) {
        subscriber.next({
          chunks: [],
          nextSeq: this.record.log.wake + 1,
          exited: true,
          exitCode: null,
          closed: true,
          failure: failure.message,
          sandboxDenied: false,
        });
        subscriber.complete();
        return undefined;
      }
      const params = {
        processId: this.processId,
        afterSeq: options.afterSeq ?? null,
        maxBytes: options.maxBytes ?? null,
        waitMs: options.waitMs ?? null,
      };
      return this.core.calls
        .call('process/read', params, { recovery: 'resend' })
        .pipe(map(decodeReadResult))
        .subscribe(subscriber);
    });
  }

  private outputOf(...streams: readonly string[]): Observable<Uint8Array> {
    return this.events$.pipe(
      filter(
        (event): event is ProcessOutputEvent =>
          event.type === 'output' && streams.includes(event.stream),
      ),
      map((event) => event.chunk),
    );
  }
}

function decodeReadResult(result: ProcessReadResult): ProcessReadResponse {
  return {
    ...result,
    chunks: result.chunks.map((chunk) => ({
      type: 'output' as const,
      seq: chunk.seq,
      stream: chunk.stream,
      chunk: decodeValidatedBase64(chunk.chunk),
    })),
  };
}
