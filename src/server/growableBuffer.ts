/**
 * Bytes appended piece by piece, handed back as one buffer. Pieces of at least
 * `KEPT_PIECE_BYTES` (socket reads, usually 64 KiB) are kept as they are and joined once, by
 * `take`: a 1 MiB frame split over socket reads is copied once, not once per doubling. Smaller
 * pieces are copied into a tail that doubles as it fills, so a peer that sends a message one
 * byte at a time (a byte per TCP segment, or a 1-byte fragment per frame) costs memory in
 * proportion to its bytes, not an object per piece: every kept piece or tail holds at least
 * that many bytes, or sits between two that do. The caller must not change a piece after
 * appending it. Guarded by spec/server/growableBuffer.spec.ts.
 */
const EMPTY = Buffer.alloc(0);
/** Pieces at least this long are kept by reference instead of copied. */
export const KEPT_PIECE_BYTES = 4096;

export class GrowableBuffer {
  /** Kept pieces and finished tails, in order. */
  private pieces: Uint8Array[] = [];
  /** Where small pieces are copied; `tailUsed` bytes of it are taken. */
  private tail: Buffer = EMPTY;
  private tailUsed = 0;
  private used = 0;

  get length(): number {
    return this.used;
  }

  append(bytes: Uint8Array): void {
    if (bytes.length >= KEPT_PIECE_BYTES) {
      this.endTail();
      this.pieces.push(bytes);
    } else {
      this.reserveTail(this.tailUsed + bytes.length);
      this.tail.set(bytes, this.tailUsed);
      this.tailUsed += bytes.length;
    }
    this.used += bytes.length;
  }

  /** The bytes appended so far, handed over: the buffer starts empty again. */
  take(): Buffer {
    this.endTail();
    const [only] = this.pieces;
    const bytes =
      this.pieces.length === 1 && only !== undefined
        ? Buffer.from(only.buffer, only.byteOffset, only.byteLength)
        : Buffer.concat(this.pieces, this.used);
    this.clear();
    return bytes;
  }

  /** Drops what was appended (and the memory it took). */
  clear(): void {
    this.pieces = [];
    this.tail = EMPTY;
    this.tailUsed = 0;
    this.used = 0;
  }

  /** Makes room in the tail for `total` bytes, doubling it. */
  private reserveTail(total: number): void {
    if (total <= this.tail.length) return;
    const grown = Buffer.allocUnsafe(Math.max(total, this.tail.length * 2));
    this.tail.copy(grown, 0, 0, this.tailUsed);
    this.tail = grown;
  }

  /** Moves the tail's bytes, if any, to the pieces. */
  private endTail(): void {
    if (this.tailUsed === 0) return;
    this.pieces.push(this.tail.subarray(0, this.tailUsed));
    this.tail = EMPTY;
    this.tailUsed = 0;
  }
}
