/**
 * Bytes appended piece by piece into one buffer that doubles as it fills: each byte is copied
 * about twice at most, and nothing is kept per piece. A peer that sends a message one byte
 * at a time (a byte per TCP segment, or a 1-byte fragment per frame) then costs memory in
 * proportion to its bytes, not an object per piece.
 */
const EMPTY = Buffer.alloc(0);

export class GrowableBuffer {
  private buffer: Buffer = EMPTY;
  private used = 0;

  get length(): number {
    return this.used;
  }

  /** Makes room for `total` bytes in all, so appends up to it copy each byte once. */
  reserve(total: number): void {
    if (total <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(total, this.buffer.length * 2));
    this.buffer.copy(grown, 0, 0, this.used);
    this.buffer = grown;
  }

  append(bytes: Uint8Array): void {
    this.reserve(this.used + bytes.length);
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
  }

  /** The bytes appended so far, handed over: the buffer starts empty again. */
  take(): Buffer {
    const bytes = this.buffer.subarray(0, this.used);
    this.clear();
    return bytes;
  }

  /** Drops what was appended (and the memory it took). */
  clear(): void {
    this.buffer = EMPTY;
    this.used = 0;
  }
}
