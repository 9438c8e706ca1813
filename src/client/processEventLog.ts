/**
 * Exactly-once, in-order delivery of one process's events (spec/protocol.md §11.4, §14.3).
 *
 * Notifications may arrive out of order, twice, or not at all (while the transport is down).
 * The log keeps a bounded reorder buffer keyed by `seq`, publishes contiguous runs, drops
 * duplicates, and after a resume rebuilds the missing events from a `process/read` reply.
 * Published events go to live subscribers and into a bounded replay history for late ones.
 */
import { Observable, Subject } from 'rxjs';
import { ExecServerError, ProcessFailedError } from '../protocol/errors.js';
import {
  MAX_PENDING_PROCESS_EVENTS,
  MAX_PENDING_PROCESS_EVENT_BYTES,
  PROCESS_EVENT_HISTORY_BYTES,
  PROCESS_EVENT_HISTORY_CAPACITY,
} from './limits.js';
import {
  processEventBytes,
  type ProcessEvent,
  type ProcessExitedEvent,
  type ProcessReadResponse,
} from './processEvents.js';

export class ProcessEventLog {
  private lastPublished = 0;
  private closedPublished = false;
  private exitEvent: ProcessExitedEvent | undefined;
  private readonly pending = new Map<number, ProcessEvent>();
  private pendingBytes = 0;
  private failureError: ExecServerError | undefined;
  private highestSeen = 0;

  private readonly history: ProcessEvent[] = [];
  private historyBytes = 0;
  private readonly live = new Subject<ProcessEvent>();

  constructor(readonly processId: string) {}

  /** Highest `seq` published in order (0 before the first event). */
  get lastPublishedSeq(): number {
    return this.lastPublished;
  }

  /** Highest `seq` observed, published or buffered; bumped by one when the log fails. */
  get wake(): number {
    return this.highestSeen;
  }

  /** True once `closed` was published or the log failed: no more events will come. */
  get isFinished(): boolean {
    return this.closedPublished || this.failureError !== undefined;
  }

  get failure(): ExecServerError | undefined {
    return this.failureError;
  }

  get isClosed(): boolean {
    return this.closedPublished;
  }

  /**
   * Every published event: first the retained history (at most 256 events / 1 MiB of output,
   * oldest dropped first), then live events. Completes after `closed`; errors with the
   * failure. A subscriber that needs older output than the history holds should use
   * `process/read` with `afterSeq`.
   */
  readonly events$: Observable<ProcessEvent> = new Observable<ProcessEvent>((subscriber) => {
    for (const event of [...this.history]) {
      if (subscriber.closed) return;
      subscriber.next(event);
    }
    return this.live.subscribe(subscriber);
  });

  /** The exit code, once; errors with the failure if the log fails before the exit. */
  readonly exitCode$: Observable<number> = new Observable<number>((subscriber) => {
    const emit = (event: ProcessExitedEvent): void => {
      subscriber.next(event.exitCode);
      subscriber.complete();
    };
    if (this.exitEvent !== undefined) {
      emit(this.exitEvent);
      return;
    }
    return this.live.subscribe({
      next: (event) => {
        if (event.type === 'exited') emit(event);
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
  });

  /**
   * Accepts one event from a notification. Old and duplicate events are dropped; an event
   * ahead of the next expected `seq` waits in the reorder buffer. Overflowing the buffer
   * fails the log. Returns false when the log failed because of this event.
   */
  accept(event: ProcessEvent): boolean {
    if (this.isFinished || event.seq <= this.lastPublished || this.pending.has(event.seq)) {
      return true;
    }
    const problem = this.admissionProblem(event);
    if (problem !== undefined) {
      this.fail(new ProcessFailedError(this.processId, problem));
      return false;
    }
    this.pending.set(event.seq, event);
    this.pendingBytes += processEventBytes(event);
    this.highestSeen = Math.max(this.highestSeen, event.seq);
    this.drain();
    return true;
  }

  /**
   * Fails the log: pending events are discarded, subscribers get `error`. No-op once closed
   * or already failed.
   */
  fail(error: ExecServerError): void {
    if (this.isFinished) return;
    this.failureError = error;
    this.pending.clear();
    this.pendingBytes = 0;
    this.highestSeen += 1;
    this.live.error(error);
  }

  /**
   * Rebuilds the events missed while the transport was down from a `process/read` reply taken
   * with `afterSeq = lastPublishedSeq` (spec §14.3), then publishes them in order. Throws a
   * plain Error describing the inconsistency when the reply cannot fill the gap; the caller
   * fails the process with it.
   */
  recover(snapshot: ProcessReadResponse): void {
    if (snapshot.failure !== null) {
      throw new Error(`process failed while recovering: ${snapshot.failure}`);
    }
    const target = snapshot.nextSeq - 1;
    if (this.isFinished || target <= this.lastPublished) return;

    const beyond = snapshot.chunks.find((chunk) => chunk.seq > target);
    if (beyond !== undefined) {
      throw new Error(
        `process read returned output seq ${beyond.seq} beyond its next seq ${snapshot.nextSeq}`,
      );
    }
    const candidates = new Map<number, ProcessEvent>(this.pending);
    for (const chunk of snapshot.chunks) {
      if (chunk.seq > this.lastPublished && !candidates.has(chunk.seq))
        candidates.set(chunk.seq, chunk);
    }
    if (snapshot.closed) {
      const atTarget = candidates.get(target);
      if (atTarget !== undefined && atTarget.type !== 'closed') {
        throw new Error(`process close sequence ${target} conflicts with recovered output`);
      }
      candidates.set(target, { type: 'closed', seq: target });
    }
    for (const [seq, event] of candidates) {
      if (event.type === 'exited' && snapshot.sandboxDenied && !event.sandboxDenied) {
        candidates.set(seq, { ...event, sandboxDenied: true });
      }
    }
    const exitKnown =
      this.exitEvent !== undefined ||
      [...candidates.values()].some((event) => event.type === 'exited');
    const missing: number[] = [];
    for (let seq = this.lastPublished + 1; seq <= target; seq++) {
      if (!candidates.has(seq)) missing.push(seq);
    }
    if (snapshot.exited && !exitKnown && missing.length === 1) {
      if (snapshot.exitCode === null) {
        throw new Error('recovering exited process did not include its exit code');
      }
      const seq = missing[0]!;
      candidates.set(seq, {
        type: 'exited',
        seq,
        exitCode: snapshot.exitCode,
        sandboxDenied: snapshot.sandboxDenied,
      });
    } else if (missing.length > 0) {
      throw new Error(
        `process events are no longer retained while recovering through sequence ${target}: the executor discarded output produced while this client was away (codex exec-server keeps only the newest 1 MiB of each process), so the stream cannot continue without a gap`,
      );
    }

    // Everything in (lastPublished, target] is now known: publish it straight through, then
    // let anything buffered beyond the target follow.
    this.pending.clear();
    this.pendingBytes = 0;
    for (const [seq, event] of candidates) {
      if (seq > target) {
        this.pending.set(seq, event);
        this.pendingBytes += processEventBytes(event);
      }
    }
    for (let seq = this.lastPublished + 1; seq <= target && !this.isFinished; seq++) {
      this.publish(candidates.get(seq)!);
    }
    this.highestSeen = Math.max(this.highestSeen, target);
    this.drain();
  }

  private admissionProblem(event: ProcessEvent): string | undefined {
    const closesGap = event.seq === this.lastPublished + 1;
    if (!closesGap && this.pending.size >= MAX_PENDING_PROCESS_EVENTS) {
      return `process event reorder buffer exceeds ${MAX_PENDING_PROCESS_EVENTS} entries`;
    }
    const bytes = processEventBytes(event);
    if (bytes > MAX_PENDING_PROCESS_EVENT_BYTES) {
      return `process event exceeds ${MAX_PENDING_PROCESS_EVENT_BYTES} bytes`;
    }
    if (!closesGap && this.pendingBytes + bytes > MAX_PENDING_PROCESS_EVENT_BYTES) {
      return `process event reorder buffer exceeds ${MAX_PENDING_PROCESS_EVENT_BYTES} bytes`;
    }
    return undefined;
  }

  private drain(): void {
    for (;;) {
      const next = this.pending.get(this.lastPublished + 1);
      if (next === undefined || this.isFinished) return;
      this.pending.delete(next.seq);
      this.pendingBytes -= processEventBytes(next);
      this.publish(next);
    }
  }

  private publish(event: ProcessEvent): void {
    this.lastPublished = event.seq;
    this.highestSeen = Math.max(this.highestSeen, event.seq);
    if (event.type === 'exited') this.exitEvent = event;
    this.remember(event);
    this.live.next(event);
    if (event.type === 'closed') {
      this.closedPublished = true;
      this.pending.clear();
      this.pendingBytes = 0;
      this.live.complete();
    }
  }

  private remember(event: ProcessEvent): void {
    this.history.push(event);
    this.historyBytes += processEventBytes(event);
    while (
      this.history.length > PROCESS_EVENT_HISTORY_CAPACITY ||
      (this.historyBytes > PROCESS_EVENT_HISTORY_BYTES && this.history.length > 1)
    ) {
      this.historyBytes -= processEventBytes(this.history.shift()!);
    }
  }
}
