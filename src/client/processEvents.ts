/**
 * Process events as a client sees them (spec/protocol.md §6.4, §11.4): one per-process `seq`
 * starting at 1, shared by output, exit and close; `closed` is always last.
 */

/** Which pipe an output chunk came from; `pty` when the process runs on a terminal. */
export type ProcessStream = 'stdout' | 'stderr' | 'pty';

/** A chunk of raw output bytes (no decoding, no line splitting). */
export interface ProcessOutputEvent {
  readonly type: 'output';
  readonly seq: number;
  readonly stream: ProcessStream;
  readonly chunk: Uint8Array;
}

/** The process was reaped. Output may still follow (a grandchild holding the pipe). */
export interface ProcessExitedEvent {
  readonly type: 'exited';
  readonly seq: number;
  /** Exit status; 128 + N after death by signal N (137 after `terminate()`). */
  readonly exitCode: number;
  readonly sandboxDenied: boolean;
}

/** Exit observed and every output stream at EOF. Always the last event of a process. */
export interface ProcessClosedEvent {
  readonly type: 'closed';
  readonly seq: number;
}

/**
 * One event of a process, in `seq` order: output chunks, then `exited` (output may still follow),
 * then `closed`, always last.
 */
export type ProcessEvent = ProcessOutputEvent | ProcessExitedEvent | ProcessClosedEvent;

/** Bytes an event counts against the reorder buffer and the replay history. */
export function processEventBytes(event: ProcessEvent): number {
  return event.type === 'output' ? event.chunk.byteLength : 0;
}

/** A `process/read` reply with decoded bytes (also what recovery rebuilds missed events from). */
export interface ProcessReadResponse {
  readonly chunks: readonly ProcessOutputEvent[];
  /** One past the last event covered; pass `nextSeq - 1` as the next `afterSeq`. */
  readonly nextSeq: number;
  readonly exited: boolean;
  readonly exitCode: number | null;
  readonly closed: boolean;
  /** Set (by the client) when this process's event stream failed; the other fields are then synthetic. */
  readonly failure: string | null;
  readonly sandboxDenied: boolean;
}
