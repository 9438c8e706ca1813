import { describe, expect, it } from '@jest/globals';
import { ProcessFailedError } from '../../src/protocol/errors.js';
import { ProcessEventLog } from '../../src/client/processEventLog.js';
import type { ProcessReadResponse } from '../../src/client/processEvents.js';
import type { ProcessEvent, ProcessOutputEvent } from '../../src/client/processEvents.js';
import { EMPTY_READ } from './support/fakeClient.js';

const out = (
  seq: number,
  text = `o${seq}`,
  stream: 'stdout' | 'stderr' = 'stdout',
): ProcessOutputEvent => ({
  type: 'output',
  seq,
  stream,
  chunk: new Uint8Array(Buffer.from(text)),
});
const exited = (seq: number, exitCode = 0): ProcessEvent => ({
  type: 'exited',
  seq,
  exitCode,
  sandboxDenied: false,
});
const closed = (seq: number): ProcessEvent => ({ type: 'closed', seq });

function record(log: ProcessEventLog): {
  seqs: number[];
  types: string[];
  error?: unknown;
  completed: boolean;
} {
  const seen: { seqs: number[]; types: string[]; error?: unknown; completed: boolean } = {
    seqs: [],
    types: [],
    completed: false,
  };
  log.events$.subscribe({
    next: (event) => {
      seen.seqs.push(event.seq);
      seen.types.push(event.type);
    },
    error: (error: unknown) => (seen.error = error),
    complete: () => (seen.completed = true),
  });
  return seen;
}

const snapshot = (overrides: Partial<ProcessReadResponse>): ProcessReadResponse => ({
  ...EMPTY_READ,
  ...overrides,
});

describe('ProcessEventLog ordering', () => {
  it('delivers reordered notifications in seq order (closed 4, output 1, exited 3, output 2)', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    log.accept(closed(4));
    log.accept(out(1));
    expect(seen.seqs).toEqual([1]);
    log.accept(exited(3, 7));
    log.accept(out(2));
    expect(seen.seqs).toEqual([1, 2, 3, 4]);
    expect(seen.types).toEqual(['output', 'output', 'exited', 'closed']);
    expect(seen.completed).toBe(true);
    expect(log.isClosed).toBe(true);
  });

  it('drops duplicates and events at or below the published seq', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    log.accept(out(1));
    log.accept(out(1, 'again'));
    log.accept(out(3));
    log.accept(out(3, 'dup-pending'));
    log.accept(out(2));
    expect(seen.seqs).toEqual([1, 2, 3]);
    expect(log.lastPublishedSeq).toBe(3);
  });

  it('emits the exit code once, also to subscribers that come after the exit', () => {
    const log = new ProcessEventLog('p');
    const early: number[] = [];
    log.exitCode$.subscribe((code) => early.push(code));
    log.accept(out(1));
    log.accept(exited(2, 42));
    const late: number[] = [];
    log.exitCode$.subscribe((code) => late.push(code));
    expect(early).toEqual([42]);
    expect(late).toEqual([42]);
  });

  it('replays at most 256 retained events to a late subscriber, then completes', () => {
    const log = new ProcessEventLog('p');
    for (let seq = 1; seq <= 300; seq++) log.accept(out(seq));
    log.accept(closed(301));
    const seen = record(log);
    expect(seen.seqs).toHaveLength(256);
    expect(seen.seqs[0]).toBe(46);
    expect(seen.seqs.at(-1)).toBe(301);
    expect(seen.completed).toBe(true);
  });

  it('bounds the replay history by retained bytes (1 MiB)', () => {
    const log = new ProcessEventLog('p');
    const big = 'x'.repeat(400 * 1024);
    for (let seq = 1; seq <= 4; seq++) log.accept(out(seq, big));
    const seen = record(log);
    expect(seen.seqs).toEqual([3, 4]);
  });
});

describe('ProcessEventLog limits', () => {
  it('fails with "reorder buffer exceeds 256 entries" on the 257th buffered event', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    for (let seq = 2; seq <= 257; seq++) expect(log.accept(out(seq))).toBe(true);
    expect(log.accept(out(258))).toBe(false);
    expect(seen.error).toBeInstanceOf(ProcessFailedError);
    expect((seen.error as Error).message).toBe('process event reorder buffer exceeds 256 entries');
    expect(log.isFinished).toBe(true);
  });

  it('always accepts the event that closes the gap, even with a full buffer', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    for (let seq = 2; seq <= 257; seq++) log.accept(out(seq));
    expect(log.accept(out(1))).toBe(true);
    expect(seen.seqs).toHaveLength(257);
    expect(seen.error).toBeUndefined();
  });

  it('fails when buffered bytes exceed 1 MiB', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    log.accept(out(2, 'x'.repeat(600 * 1024)));
    log.accept(out(3, 'x'.repeat(600 * 1024)));
    expect((seen.error as Error).message).toBe(
      'process event reorder buffer exceeds 1048576 bytes',
    );
  });

  it('rejects a single event larger than 1 MiB', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    log.accept(out(1, 'x'.repeat(1024 * 1024 + 1)));
    expect((seen.error as Error).message).toBe('process event exceeds 1048576 bytes');
    expect(log.wake).toBe(1);
  });

  it('replays history then the failure to late subscribers, and exitCode$ errors', () => {
    const log = new ProcessEventLog('p');
    log.accept(out(1));
    log.fail(new ProcessFailedError('p', 'boom'));
    const seen = record(log);
    expect(seen.seqs).toEqual([1]);
    expect((seen.error as Error).message).toBe('boom');
    let exitError: unknown;
    log.exitCode$.subscribe({ error: (error: unknown) => (exitError = error) });
    expect((exitError as Error).message).toBe('boom');
  });
});

describe('ProcessEventLog.recover', () => {
  it('fills the gap from a process/read reply and synthesizes the missing exit', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    log.accept(out(1));
    // Missed: output 2, output 3, exited 4, closed 5.
    log.recover(
      snapshot({ chunks: [out(2), out(3)], nextSeq: 6, exited: true, exitCode: 3, closed: true }),
    );
    expect(seen.seqs).toEqual([1, 2, 3, 4, 5]);
    expect(seen.types).toEqual(['output', 'output', 'output', 'exited', 'closed']);
    expect(seen.completed).toBe(true);
  });

  it('places the synthesized exit at the gap when output follows the exit', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    log.recover(snapshot({ chunks: [out(1), out(3)], nextSeq: 4, exited: true, exitCode: 0 }));
    expect(seen.types).toEqual(['output', 'exited', 'output']);
  });

  it('keeps buffered notifications and merges them with the reply', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    log.accept(out(3));
    log.recover(snapshot({ chunks: [out(1), out(2)], nextSeq: 4 }));
    expect(seen.seqs).toEqual([1, 2, 3]);
  });

  it('fails when retained output was evicted', () => {
    const log = new ProcessEventLog('p');
    expect(() => log.recover(snapshot({ chunks: [out(3)], nextSeq: 4 }))).toThrow(
      'process events are no longer retained while recovering through sequence 3: the executor discarded output produced while this client was away (codex exec-server keeps only the newest 1 MiB of each process), so the stream cannot continue without a gap',
    );
  });

  it('rejects a close whose seq is taken by output, and an exit without its code', () => {
    expect(() =>
      new ProcessEventLog('p').recover(snapshot({ chunks: [out(1)], nextSeq: 2, closed: true })),
    ).toThrow('process close sequence 1 conflicts with recovered output');
    expect(() =>
      new ProcessEventLog('p').recover(
        snapshot({ chunks: [out(1)], nextSeq: 3, exited: true, exitCode: null }),
      ),
    ).toThrow('recovering exited process did not include its exit code');
    expect(() => new ProcessEventLog('p').recover(snapshot({ failure: 'gone' }))).toThrow(
      'process failed while recovering: gone',
    );
  });

  it('does nothing when nothing was missed', () => {
    const log = new ProcessEventLog('p');
    const seen = record(log);
    log.accept(out(1));
    log.recover(snapshot({ chunks: [out(1)], nextSeq: 2 }));
    expect(seen.seqs).toEqual([1]);
  });
});
