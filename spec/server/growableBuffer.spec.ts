/** GrowableBuffer: appended bytes come back whole and in order, however small the pieces. */
import { describe, expect, it } from '@jest/globals';
import { GrowableBuffer } from '../../src/server/growableBuffer.js';

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
      const behind = (buffer as unknown as { buffer: Buffer }).buffer.length;
      if (behind !== capacity) {
        copies.push(buffer.length - 1);
        capacity = behind;
      }
    }
    const copied = copies.reduce((sum, bytes) => sum + bytes, 0);
    expect(copied).toBeLessThan(2 * buffer.length);
  });

  it('clear drops the bytes', () => {
    const buffer = new GrowableBuffer();
    buffer.append(Buffer.from('abc'));
    buffer.clear();
    expect(buffer.length).toBe(0);
    expect(buffer.take().length).toBe(0);
  });
});
