/**
 * A session's process table (spec §6): `process/start`, `read`, `write`, `signal`,
 * `terminate`, and the notifications they produce. Notifications go to `notify`, which the
 * session routes to its attached connection or drops while detached (output stays retained).
 */
import { describeOsError } from './osError.js';
import { childEnvironment } from './envPolicy.js';
import { spawnChild } from './childProcess.js';
import type { Spawner } from './spawner.js';
import { acquireSharedFifoStock } from './sharedFifoStock.js';
import { cwdPath } from './hostPath.js';
import { ProcessOutputParams } from './fastpath/notificationText.js';
import { chunkBytes } from './fastpath/processWriteText.js';
import { ManagedProcess, type ProcessEvent, type RetainedChunk } from './managedProcess.js';
import type { ProcessStartParams } from './params.js';
import { RpcFailure } from './rpcFailure.js';
import { DenialScanner } from './sandbox/denialScanner.js';
import { confineCommand } from './sandbox/launcher.js';
import { sandboxPlan } from './sandbox/permissionProfile.js';

/**
 * Processes one session may have running (or starting) at once; a start beyond it is refused
 * (-32600) until one closes, and costs other sessions nothing (processLimits.spec.ts).
 */
export const MAX_LIVE_PROCESSES_PER_SESSION = 128;

/**
 * How long a resumed session's processes stay held (see ManagedProcess) when its client does
 * not read them: a client that never calls `process/read` after resuming stalls them no longer.
 */
const RESUME_CATCH_UP_MS = 10_000;

/** How long a closed process stays readable before its id is forgotten (spec §6.5). */
const CLOSED_PROCESS_RETENTION_MS = 30_000;

export type Notify = (method: string, params: unknown) => void;

interface Starting {
  state: 'starting';
  cancelled: boolean;
}

type Entry = Starting | { state: 'ready'; process: ManagedProcess };

export interface ReadResult {
  chunks: { seq: number; stream: string; chunk: string }[];
  nextSeq: number;
  exited: boolean;
  exitCode: number | null;
  closed: boolean;
  failure: null;
  sandboxDenied: boolean;
}

function wireChunk(entry: RetainedChunk): { seq: number; stream: string; chunk: string } {
  return { seq: entry.seq, stream: entry.stream, chunk: entry.chunk.toString('base64') };
}

export class ProcessManager {
  private readonly entries = new Map<string, Entry>();
  private readonly retentionTimers = new Set<NodeJS.Timeout>();
  /** Sandboxed processes only: what decides their `sandboxDenied`. */
  private readonly denialScanners = new Map<string, DenialScanner>();
  /** Sandboxed processes not yet closed: what undoes their sandbox's host-side traces. */
  private readonly sandboxReleases = new Map<string, () => void>();
  /** FIFOs for pipe-mode stdio, from the stock shared with the executor's other sessions. */
  private readonly fifos = acquireSharedFifoStock();
  /** Output reading is paused while the attached connection is backed up. */
  private outputPaused = false;
  private catchUpTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly notify: Notify,
    /** The executor's process spawner (spawner.ts); without one, children spawn directly. */
    private readonly spawner?: Spawner,
  ) {}

  async start(
    params: ProcessStartParams,
  ): Promise<{ processId: string; sandboxType: 'none' | 'linuxSeccomp' }> {
    const cwd = cwdPath(params.cwd);
    if (params.argv.length === 0) throw RpcFailure.invalidParams('argv must not be empty');
    const plan = sandboxPlan(params.sandbox, cwd);
    const { processId } = params;
    if (this.entries.has(processId))
      throw RpcFailure.invalidRequest(`process ${processId} already exists`);
    if (this.liveCount() >= MAX_LIVE_PROCESSES_PER_SESSION) {
      throw RpcFailure.invalidRequest(
        `at most ${MAX_LIVE_PROCESSES_PER_SESSION} processes may run per session; terminate one or wait for one to close`,
      );
    }
    const reservation: Starting = { state: 'starting', cancelled: false };
    this.entries.set(processId, reservation);
    let confined;
    try {
      // On the PTY path the program is `arg0 ?? argv[0]` (childProcess.ts); bwrap 0.8 cannot
      // set a separate argv[0], so under a sandbox arg0 only chooses the program there.
      const [first, ...rest] = params.argv as [string, ...string[]];
      confined =
        plan.kind === 'confined'
          ? await confineCommand(
              plan,
              params.tty ? (params.arg0 ?? first) : first,
              rest,
              params.tty,
            )
          : undefined;
    } catch (error) {
      if (this.entries.get(processId) === reservation) this.entries.delete(processId);
      throw error;
    }
    if (confined) {
      this.denialScanners.set(processId, new DenialScanner());
      this.sandboxReleases.set(processId, confined.release);
    }
    const managed = new ManagedProcess(
      processId,
      (event) => this.forward(processId, event),
      () => {
        confined?.release();
        this.sandboxReleases.delete(processId);
        this.scheduleRemoval(processId, managed);
      },
    );
    let child;
    try {
      child = await spawnChild(
        {
          argv: confined ? confined.argv : params.argv,
          cwd,
          env: childEnvironment(params.env, params.envPolicy),
          arg0: confined ? null : (params.arg0 ?? null),
          tty: params.tty,
          pipeStdin: params.pipeStdin ?? false,
          fifos: this.fifos.stock,
          spawner: this.spawner,
        },
        managed.events,
      );
    } catch (error) {
      confined?.release();
      this.sandboxReleases.delete(processId);
      this.denialScanners.delete(processId);
      if (this.entries.get(processId) === reservation) this.entries.delete(processId);
      throw RpcFailure.internal(describeOsError(error));
    }
    managed.attach(child);
    if (this.outputPaused) managed.setOutputPaused(true);
    if (reservation.cancelled || this.entries.get(processId) !== reservation) {
      managed.killGroup();
      managed.release();
      confined?.release();
      this.sandboxReleases.delete(processId);
      this.denialScanners.delete(processId);
      throw RpcFailure.invalidRequest(`process ${processId} start was cancelled`);
    }
    this.entries.set(processId, { state: 'ready', process: managed });
    return { processId, sandboxType: plan.kind === 'none' ? 'none' : 'linuxSeccomp' };
  }

  private sandboxDenied(processId: string, exitCode: number | null): boolean {
    if (exitCode === null) return false;
    return this.denialScanners.get(processId)?.denied(exitCode) ?? false;
  }

  /** The session detached: every process keeps what its client has not read. */
  hold(): void {
    this.clearCatchUp();
    for (const process of this.readyProcesses()) process.hold();
  }

  /** The session was resumed: held processes wait for the client's reads, for a while. */
  catchUp(): void {
    this.clearCatchUp();
    for (const process of this.readyProcesses()) process.catchUp();
    this.catchUpTimer = setTimeout(() => {
      this.catchUpTimer = undefined;
      for (const process of this.readyProcesses()) process.endHold();
    }, RESUME_CATCH_UP_MS);
    this.catchUpTimer.unref();
  }

  private clearCatchUp(): void {
    if (this.catchUpTimer) clearTimeout(this.catchUpTimer);
    this.catchUpTimer = undefined;
  }

  private *readyProcesses(): Iterable<ManagedProcess> {
    for (const entry of this.entries.values()) if (entry.state === 'ready') yield entry.process;
  }

  private liveCount(): number {
    let live = 0;
    for (const entry of this.entries.values()) {
      if (entry.state === 'starting' || !entry.process.closed) live += 1;
    }
    return live;
  }

  /**
   * Stops (or restarts) reading every process's output, so a connection that cannot keep up
   * makes the children wait, as pipes do, instead of the executor buffering without bound.
   */
  setOutputPaused(paused: boolean): void {
    if (paused === this.outputPaused) return;
    this.outputPaused = paused;
    for (const entry of this.entries.values()) {
      if (entry.state === 'ready') entry.process.setOutputPaused(paused);
    }
  }

  private forward(processId: string, event: ProcessEvent): void {
    switch (event.kind) {
      case 'output':
        this.denialScanners.get(processId)?.observe(event.chunk);
        this.notify(
          'process/output',
          new ProcessOutputParams(processId, event.seq, event.stream, event.chunk),
        );
        return;
      case 'exited':
        this.notify('process/exited', {
          processId,
          seq: event.seq,
          exitCode: event.exitCode,
          sandboxDenied: this.sandboxDenied(processId, event.exitCode),
        });
        return;
      case 'closed':
        this.notify('process/closed', { processId, seq: event.seq });
        return;
    }
  }

  private scheduleRemoval(processId: string, managed: ManagedProcess): void {
    const timer = setTimeout(() => {
      this.retentionTimers.delete(timer);
      managed.release();
      const entry = this.entries.get(processId);
      if (entry?.state === 'ready' && entry.process === managed) {
        this.entries.delete(processId);
        this.denialScanners.delete(processId);
      }
    }, CLOSED_PROCESS_RETENTION_MS);
    timer.unref();
    this.retentionTimers.add(timer);
  }

  private ready(processId: string): ManagedProcess {
    const entry = this.entries.get(processId);
    if (!entry) throw RpcFailure.invalidRequest(`unknown process id ${processId}`);
    if (entry.state === 'starting')
      throw RpcFailure.invalidRequest(`process id ${processId} is starting`);
    return entry.process;
  }

  /**
   * `process/read`: returns at once when there is something to report, otherwise waits up
   * to `waitMs` for output, exit or close. `stillAttached` is checked after each wait.
   */
  async read(
    params: {
      processId: string;
      afterSeq?: number | null;
      maxBytes?: number | null;
      waitMs?: number | null;
    },
    stillAttached: () => boolean,
  ): Promise<ReadResult> {
    const afterSeq = params.afterSeq ?? 0;
    const maxBytes = params.maxBytes ?? null;
    const deadline = Date.now() + (params.waitMs ?? 0);
    this.ready(params.processId).acknowledge(afterSeq);
    for (;;) {
      const managed = this.ready(params.processId);
      const snapshot = managed.read(afterSeq, maxBytes);
      const remaining = deadline - Date.now();
      const ready =
        snapshot.chunks.length > 0 ||
        snapshot.closed ||
        (snapshot.exited && afterSeq < snapshot.nextSeq - 1);
      if (ready || remaining <= 0) {
        return {
          chunks: snapshot.chunks.map(wireChunk),
          nextSeq: snapshot.nextSeq,
          exited: snapshot.exited,
          exitCode: snapshot.exitCode,
          closed: snapshot.closed,
          failure: null,
          sandboxDenied: this.sandboxDenied(params.processId, snapshot.exitCode),
        };
      }
      await managed.waitForChange(remaining);
      if (!stillAttached())
        throw RpcFailure.invalidRequest('session has been resumed by another connection');
    }
  }

  /** Answered once the child has taken the write before this one (ManagedProcess `stdinDrained`). */
  write(params: {
    processId: string;
    chunk: string;
    writeId: string;
  }): { status: string } | Promise<{ status: string }> {
    if (params.writeId === '') throw RpcFailure.invalidParams('writeId must not be empty');
    const entry = this.entries.get(params.processId);
    if (!entry) return { status: 'unknownProcess' };
    if (entry.state === 'starting') return { status: 'starting' };
    let status: string;
    try {
      status = entry.process.write(params.writeId, chunkBytes(params.chunk));
    } catch {
      throw RpcFailure.internal('failed to write to process stdin');
    }
    const drained = entry.process.stdinDrained();
    return drained === undefined ? { status } : drained.then(() => ({ status }));
  }

  signal(params: { processId: string }): Record<string, never> {
    const entry = this.entries.get(params.processId);
    if (entry?.state !== 'ready') return {};
    try {
      entry.process.interrupt();
    } catch (error) {
      throw RpcFailure.internal(`failed to signal process: ${describeOsError(error)}`);
    }
    return {};
  }

  terminate(params: { processId: string }): { running: boolean } {
    const entry = this.entries.get(params.processId);
    if (!entry) return { running: false };
    if (entry.state === 'starting') {
      entry.cancelled = true;
      this.entries.delete(params.processId);
      return { running: true };
    }
    return { running: entry.process.kill() };
  }

  /** Kills every process group and forgets everything (session expiry or executor shutdown). */
  shutdown(): void {
    for (const entry of this.entries.values()) {
      if (entry.state === 'starting') {
        entry.cancelled = true;
        continue;
      }
      if (!entry.process.closed) entry.process.killGroup();
      entry.process.release();
    }
    this.entries.clear();
    this.denialScanners.clear();
    for (const release of this.sandboxReleases.values()) release();
    this.sandboxReleases.clear();
    this.clearCatchUp();
    for (const timer of this.retentionTimers) clearTimeout(timer);
    this.retentionTimers.clear();
    this.fifos.release();
  }
}
