/**
 * One running (or finished, still retained) process of a session: the per-process `seq`
 * counter shared by output, exit and close (spec §6.4), the replay buffer (§6.5; 8 MiB here,
 * 1 MiB on the binary: output in flight when a connection breaks must still be in it; its
 * bytes live in a RetainedOutput ring),
 * `process/read` snapshots (§6.6), and the stdin `writeId` de-duplication (§6.7).
 *
 * While its client may be missing output (the session is detached, or resumed and not yet
 * caught up) the process is *held*: retained output is discarded only once a `process/read`
 * has acknowledged it (its `afterSeq`), and when the buffer is full the child's output is no
 * longer read (it blocks on write, as under SSH's flow control) instead of the oldest output
 * being dropped, so a resumed client loses nothing (processRetention.spec.ts). Attached and
 * caught up, the oldest output beyond the buffer is dropped, as the binary does.
 */
import type { ChildEvents, OutputStream, RunningChild } from './childProcess.js';
import { RetainedOutput } from './retainedOutput.js';
import { timerDelay } from './timerDelay.js';

export const RETAINED_OUTPUT_BYTES = 8 * 1024 * 1024;
const RETAINED_OUTPUT_CHUNKS = 50_000;
const REMEMBERED_WRITE_IDS = 4096;
/** How long an exit waits for the pipes to drain, so output written before exit gets earlier seqs. */
const EXIT_DRAIN_GRACE_MS = 50;

/** An `output` event's `chunk` is valid only during the call (a view of the read buffer). */
export type ProcessEvent =
  | { kind: 'output'; seq: number; stream: OutputStream; chunk: Buffer }
  | { kind: 'exited'; seq: number; exitCode: number }
  | { kind: 'closed'; seq: number };

export interface RetainedChunk {
  seq: number;
  stream: OutputStream;
  chunk: Buffer;
}

export interface ReadSnapshot {
  chunks: RetainedChunk[];
  nextSeq: number;
  exited: boolean;
  exitCode: number | null;
  closed: boolean;
}

export type WriteStatus = 'accepted' | 'stdinClosed';

export class ManagedProcess {
  private nextSeq = 1;
  private readonly retained = new RetainedOutput(RETAINED_OUTPUT_BYTES);
  private exitCodeValue: number | null = null;
  private pendingExitCode: number | null = null;
  private exitTimer: NodeJS.Timeout | undefined;
  private streamsEnded = false;
  private closedValue = false;
  private readonly waiters = new Set<() => void>();
  private readonly writeIds = new Set<string>();
  private readonly writeIdOrder: string[] = [];
  private child: RunningChild | undefined;
  /** Output reading paused because the connection is backed up. */
  private pausedByConnection = false;
  /** Output reading paused because the buffer is full of output the client has not read. */
  private pausedByRetention = false;
  /** While held: the seq the client must read past (Infinity while detached). */
  private holdThrough: number | undefined;
  /** Highest `afterSeq` a `process/read` has asked for: the client has everything up to it. */
  private acknowledgedSeq = 0;

  constructor(
    readonly processId: string,
    private readonly emit: (event: ProcessEvent) => void,
    private readonly onClosed: () => void,
  ) {}

  /** The event sink to hand to `spawnChild`. */
  readonly events: ChildEvents = {
    output: (stream, chunk) => this.recordOutput(stream, chunk),
    exit: (exitCode) => this.observeExit(exitCode),
    streamsEnded: () => this.observeStreamsEnded(),
  };

  attach(child: RunningChild): void {
    this.child = child;
  }

  /** Stops or restarts reading the child's output (backpressure from the connection). */
  setOutputPaused(paused: boolean): void {
    this.pausedByConnection = paused;
    this.applyPause();
  }

  /** The session detached: keep every byte its client has not read. */
  hold(): void {
    this.holdThrough = Number.POSITIVE_INFINITY;
  }

  /** The session was resumed: held until the client has read what exists now (or `endHold`). */
  catchUp(): void {
    if (this.holdThrough === undefined) return;
    this.holdThrough = this.nextSeq - 1;
    this.acknowledge(this.acknowledgedSeq);
  }

  /** Back to the binary's rule: the oldest output beyond the buffer is dropped. */
  endHold(): void {
    this.holdThrough = undefined;
    this.trim();
  }

  /** A `process/read` asked for output after `afterSeq`: the client has everything before. */
  acknowledge(afterSeq: number): void {
    this.acknowledgedSeq = Math.max(this.acknowledgedSeq, afterSeq);
    if (this.holdThrough !== undefined && this.acknowledgedSeq >= this.holdThrough)
      this.holdThrough = undefined;
    this.trim();
  }

  private applyPause(): void {
    this.child?.setOutputPaused(this.pausedByConnection || this.pausedByRetention);
  }

  /** Drops what the buffer may drop; pauses the child while held output fills it. */
  private trim(): void {
    const retained = this.retained;
    while (
      retained.count > 1 &&
      (retained.bytes > RETAINED_OUTPUT_BYTES || retained.count > RETAINED_OUTPUT_CHUNKS)
    ) {
      if (this.holdThrough !== undefined && retained.oldest()!.seq > this.acknowledgedSeq) break;
      retained.dropOldest();
    }
    const full =
      retained.bytes >= RETAINED_OUTPUT_BYTES || retained.count >= RETAINED_OUTPUT_CHUNKS;
    const paused = this.holdThrough !== undefined && full;
    if (paused !== this.pausedByRetention) {
      this.pausedByRetention = paused;
      this.applyPause();
    }
  }

  get exited(): boolean {
    return this.exitCodeValue !== null;
  }

  get closed(): boolean {
    return this.closedValue;
  }

  /** Still running as far as the client is concerned (no exit event yet). */
  get running(): boolean {
    return this.exitCodeValue === null && this.pendingExitCode === null;
  }

  private takeSeq(): number {
    const seq = this.nextSeq;
    this.nextSeq += 1;
    return seq;
  }

  private recordOutput(stream: OutputStream, chunk: Buffer): void {
    const seq = this.takeSeq();
    this.retained.push(seq, stream, chunk);
    this.trim();
    this.emit({ kind: 'output', seq, stream, chunk });
    this.wake();
  }

  private observeExit(exitCode: number): void {
    this.pendingExitCode = exitCode;
    if (this.streamsEnded) {
      this.publishExit();
      this.publishClosed();
      return;
    }
    this.exitTimer = setTimeout(() => this.publishExit(), EXIT_DRAIN_GRACE_MS);
    this.exitTimer.unref();
  }

  private observeStreamsEnded(): void {
    this.streamsEnded = true;
    if (this.pendingExitCode === null) return;
    this.publishExit();
    this.publishClosed();
  }

  private publishExit(): void {
    if (this.exitTimer) clearTimeout(this.exitTimer);
    this.exitTimer = undefined;
    if (this.exitCodeValue !== null || this.pendingExitCode === null) return;
    this.exitCodeValue = this.pendingExitCode;
    this.emit({ kind: 'exited', seq: this.takeSeq(), exitCode: this.exitCodeValue });
    this.wake();
  }

  private publishClosed(): void {
    if (this.closedValue) return;
    this.closedValue = true;
    this.emit({ kind: 'closed', seq: this.takeSeq() });
    this.wake();
    this.onClosed();
  }

  private wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter();
  }

  /** Resolves on the next output, exit or close, or after `ms`. */
  waitForChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timerDelay(ms));
      this.waiters.add(done);
    });
  }

  /** The `process/read` selection (spec §6.6 steps 2–4). */
  read(afterSeq: number, maxBytes: number | null): ReadSnapshot {
    const chunks: RetainedChunk[] = [];
    let total = 0;
    for (const entry of this.retained.retained()) {
      if (entry.seq <= afterSeq) continue;
      if (maxBytes !== null) {
        if (chunks.length > 0 && total + entry.length > maxBytes) break;
        if (chunks.length > 0 && total >= maxBytes) break;
      }
      chunks.push({ seq: entry.seq, stream: entry.stream, chunk: this.retained.chunkBytes(entry) });
      total += entry.length;
      if (maxBytes !== null && total >= maxBytes) break;
    }
    const last = chunks[chunks.length - 1];
    const nextSeq = maxBytes !== null && last ? last.seq + 1 : this.nextSeq;
    return {
      chunks,
      nextSeq,
      exited: this.exited,
      exitCode: this.exitCodeValue,
      closed: this.closedValue,
    };
  }

  /** Queues stdin bytes once per `writeId`. */
  write(writeId: string, bytes: Buffer): WriteStatus {
    const stdin = this.child?.stdin;
    if (!stdin) return 'stdinClosed';
    if (this.writeIds.has(writeId)) return 'accepted';
    // Once the child has gone, the binary still answers `accepted` and the bytes go nowhere.
    stdin.write(bytes);
    this.writeIds.add(writeId);
    this.writeIdOrder.push(writeId);
    if (this.writeIdOrder.length > REMEMBERED_WRITE_IDS) {
      this.writeIds.delete(this.writeIdOrder.shift() as string);
    }
    return 'accepted';
  }

  /** SIGINT to the process group, if the process is still running. */
  interrupt(): void {
    if (!this.running || !this.child) return;
    this.child.signalGroup('SIGINT');
  }

  /** SIGKILL to the process group. Returns whether it was still running. */
  kill(): boolean {
    if (!this.running || !this.child) return false;
    try {
      this.child.signalGroup('SIGKILL');
    } catch {
      /* raced with its exit */
    }
    return true;
  }

  /**
   * Resolves once the child has taken the write before the latest one (or its stdin closed);
   * undefined when nothing waits. `process/write` is answered only then, so a client that waits
   * for each answer (ours, codex's) cannot make the executor hold more than two writes of a
   * child that reads slowly, and the next write travels while the child reads the last
   * (spec/server/processStdio.spec.ts, "stdin backpressure").
   */
  stdinDrained(): Promise<void> | undefined {
    return this.child?.stdin?.drained();
  }

  /** Closes our end of its stdin: the process is being forgotten. */
  release(): void {
    this.child?.release();
  }

  /** Kills whatever is left of the group, even after the leader exited (session teardown). */
  killGroup(): void {
    try {
      this.child?.signalGroup('SIGKILL');
    } catch {
      /* nothing left */
    }
  }
}
