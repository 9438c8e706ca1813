/**
 * The bytes of a process's replay buffer (spec §6.5), oldest first, copied into one ring
 * buffer per process instead of keeping each pipe read alive.
 *
 * Why a copy: a pipe read kept for replay lives long enough to be promoted out of V8's young
 * generation, and only full mark-compacts free promoted buffers; copied into the ring, every
 * read is garbage as soon as it has been sent. What it earns: docs/performance.md ("Output
 * retention in one ring (session 9)"; `FAST_PATHS=retainedOutput npx tsx
 * bench/fast-paths-output.ts` against the plain twin bench/plain/server/retainedOutput.ts).
 *
 * Contract: `chunkBytes(entry)` gives exactly the bytes `push` was given for that entry, for as
 * long as the entry is retained; `bytes` is the sum of the retained entries' lengths. Which
 * entries to drop is the caller's policy (ManagedProcess). The ring grows as the retained bytes
 * need it, doubling up to `limitBytes` and never shrinking, so a process that prints little
 * holds little. Guarded by spec/server/retainedOutput.spec.ts ("RetainedOutput", against an array of copies).
 */
import type { OutputStream } from './childProcess.js';

export interface RetainedEntry {
  readonly seq: number;
  readonly stream: OutputStream;
  /** Where the entry's bytes start in the ring (they may wrap around its end). */
  offset: number;
  readonly length: number;
}

/** The smallest ring: a process that prints a line does not need more. */
const MIN_CAPACITY = 4096;

export class RetainedOutput {
  private ring = Buffer.alloc(0);
  /** Where the next pushed byte goes. */
  private tail = 0;
  /** Retained entries are `entries[first…]`; dropped ones are cut off in batches. */
  private readonly entries: RetainedEntry[] = [];
  private first = 0;
  private retainedBytes = 0;

  /** `limitBytes`: the size the ring doubles up to; past it, it grows only as needed. */
  constructor(private readonly limitBytes: number) {}

  get bytes(): number {
    return this.retainedBytes;
  }

  get count(): number {
    return this.entries.length - this.first;
  }

  /** The oldest retained entry, if any. */
  oldest(): RetainedEntry | undefined {
    return this.entries[this.first];
  }

  /** Retained entries, oldest first. */
  *retained(): IterableIterator<RetainedEntry> {
    for (let index = this.first; index < this.entries.length; index += 1) {
      yield this.entries[index] as RetainedEntry;
    }
  }

  /** Copies `chunk` in as the newest entry. */
  push(seq: number, stream: OutputStream, chunk: Uint8Array): void {
    this.reserve(this.retainedBytes + chunk.length);
    const entry = { seq, stream, offset: this.tail, length: chunk.length };
    this.tail = this.copyIn(chunk, this.tail);
    this.entries.push(entry);
    this.retainedBytes += chunk.length;
  }

  /** Forgets the oldest entry. */
  dropOldest(): void {
    const oldest = this.entries[this.first];
    if (oldest === undefined) return;
    this.first += 1;
    this.retainedBytes -= oldest.length;
    // `shift` per drop would copy the whole array each time; cut in batches instead.
    if (this.first * 2 > this.entries.length) {
      this.entries.splice(0, this.first);
      this.first = 0;
    }
  }

  /** A copy of the bytes of a retained entry. */
  chunkBytes(entry: RetainedEntry): Buffer {
    const end = entry.offset + entry.length;
    if (end <= this.ring.length) return Buffer.from(this.ring.subarray(entry.offset, end));
    return Buffer.concat([
      this.ring.subarray(entry.offset),
      this.ring.subarray(0, end - this.ring.length),
    ]);
  }

  /** Grows the ring to hold `needed` bytes, moving the retained bytes to its start in order. */
  private reserve(needed: number): void {
    const capacity = this.ring.length;
    if (needed <= capacity) return;
    const doubled = Math.min(Math.max(MIN_CAPACITY, capacity * 2), this.limitBytes);
    const next = Buffer.alloc(Math.max(needed, doubled));
    // The retained bytes are one run from the oldest entry's offset, wrapping at most once.
    const start = this.oldest()?.offset ?? 0;
    const firstPart = Math.min(this.retainedBytes, capacity - start);
    this.ring.copy(next, 0, start, start + firstPart);
    this.ring.copy(next, firstPart, 0, this.retainedBytes - firstPart);
    for (const entry of this.retained()) {
      entry.offset = entry.offset >= start ? entry.offset - start : entry.offset + capacity - start;
    }
    this.ring = next;
    this.tail = this.retainedBytes;
  }

  /** Writes `chunk` at `at`, wrapping around the end; returns the position after it. */
  private copyIn(chunk: Uint8Array, at: number): number {
    const capacity = this.ring.length;
    const first = Math.min(chunk.length, capacity - at);
    this.ring.set(chunk.subarray(0, first), at);
    if (first < chunk.length) this.ring.set(chunk.subarray(first), 0);
    const end = at + chunk.length;
    return end >= capacity ? end - capacity : end;
  }
}
