/** GrowableBuffer: appended bytes come back whole and in order, however small the pieces. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { GrowableBuffer, KEPT_PIECE_BYTES } from '../../src/server/growableBuffer.js';

describe('GrowableBuffer', () => {
  it('hands back every byte appended, in order, across many growths', () => {
    const buffer = new GrowableBuffer();
    const expected: number[] = [];
    for (let index = 0; index < 5_000; index += 1) {
      const piece = Buffer.from([index & 0xff, (index * 7) & 0xff].slice(0, 1 + (index % 2)));
      buffer.append(piece);
      expected.push(...piece);
    }
    expect(buffer.length).toBe(expected.length);
    expect([...buffer.take()]).toEqual(expected);
    expect(buffer.length).toBe(0);
  });

  it('keeps what it handed over intact while it is refilled', () => {
    const buffer = new GrowableBuffer();
    buffer.append(Buffer.from('first'));
    const first = buffer.take();
    buffer.append(Buffer.from('second message'));
    expect(first.toString()).toBe('first');
    expect(buffer.take().toString()).toBe('second message');
  });

  it('grows by doubling: a message of single bytes is copied a bounded number of times', () => {
    const buffer = new GrowableBuffer();
    const copies: number[] = [];
    let capacity = 0;
    for (let index = 0; index < 1 << 16; index += 1) {
      buffer.append(Buffer.of(index & 0xff));
      // Each regrowth copies what is there; track the buffer behind the view to see them.
      const behind = (buffer as unknown as { tail: Buffer }).tail.length;
      if (behind !== capacity) {
        copies.push(buffer.length - 1);
        capacity = behind;
      }
    }
    const copied = copies.reduce((sum, bytes) => sum + bytes, 0);
    expect(copied).toBeLessThan(2 * buffer.length);
  });

  it('hands back what was appended, whatever the mix of piece sizes (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer({ min: 0, max: 64 }),
            fc.integer({ min: KEPT_PIECE_BYTES - 2, max: KEPT_PIECE_BYTES + 2 }),
            fc.integer({ min: 20_000, max: 70_000 }),
          ),
          { maxLength: 30 },
        ),
        (sizes) => {
          const buffer = new GrowableBuffer();
          const pieces = sizes.map((size, index) => Buffer.alloc(size, index + 1));
          for (const piece of pieces) buffer.append(piece);
          expect(buffer.length).toBe(pieces.reduce((sum, piece) => sum + piece.length, 0));
          expect(buffer.take().equals(Buffer.concat(pieces))).toBe(true);
          expect(buffer.length).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps socket-sized pieces as they are and joins them once', () => {
    const buffer = new GrowableBuffer();
    const reads = [Buffer.alloc(65_536, 1), Buffer.alloc(65_536, 2), Buffer.alloc(3, 3)];
    for (const read of reads) buffer.append(read);
    const held = (buffer as unknown as { pieces: Uint8Array[] }).pieces;
    // Not copied while they wait (the small last piece goes to the tail).
    expect(held[0]).toBe(reads[0]);
    expect(held[1]).toBe(reads[1]);
    expect(buffer.take().equals(Buffer.concat(reads))).toBe(true);
  });

  it('clear drops the bytes', () => {
    const buffer = new GrowableBuffer();
    buffer.append(Buffer.from('abc'));
    buffer.clear();
    expect(buffer.length).toBe(0);
    expect(buffer.take().length).toBe(0);
  });
});
