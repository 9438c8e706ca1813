/**
 * Plain twin of src/server/retainedOutput.ts, for the side-by-side figure only: each pushed
 * chunk is kept as it came (the pipe read itself), not copied into a ring. Same contract.
 */
import type { OutputStream } from '../../../src/server/childProcess.js';

export interface RetainedEntry {
  readonly seq: number;
  readonly stream: OutputStream;
  readonly length: number;
  readonly chunk: Uint8Array;
}

export class RetainedOutput {
  private readonly entries: RetainedEntry[] = [];
  private first = 0;
  private retainedBytes = 0;

  constructor(_limitBytes: number) {}

  get bytes(): number {
    return this.retainedBytes;
  }

  get count(): number {
    return this.entries.length - this.first;
  }

  oldest(): RetainedEntry | undefined {
    return this.entries[this.first];
  }

  *retained(): IterableIterator<RetainedEntry> {
    for (let index = this.first; index < this.entries.length; index += 1) {
      yield this.entries[index] as RetainedEntry;
    }
  }

  push(seq: number, stream: OutputStream, chunk: Uint8Array): void {
    this.entries.push({ seq, stream, length: chunk.length, chunk });
    this.retainedBytes += chunk.length;
  }

  dropOldest(): void {
    const oldest = this.entries[this.first];
    if (oldest === undefined) return;
    this.first += 1;
    this.retainedBytes -= oldest.length;
    if (this.first * 2 > this.entries.length) {
      this.entries.splice(0, this.first);
      this.first = 0;
    }
  }

  chunkBytes(entry: RetainedEntry): Buffer {
    return Buffer.from(entry.chunk);
  }
}
