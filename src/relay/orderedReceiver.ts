/**
 * Reordering of inbound data frames before decryption (noise-relay.md §5.3). Noise nonces are
 * implicit, so records must reach the decryptor exactly in send order; the relay may deliver
 * them out of order. `seq` counts from 0 per stream and direction and equals the AEAD nonce.
 * There are no ACKs or retransmits: a gap beyond the window kills the stream.
 */
import { RelayProtocolError } from './relayProtocolError.js';

export interface ReorderLimits {
  /** Furthest a buffered record may be ahead of the next expected seq (codex: 64). */
  readonly maxReorderDistance: number;
  /** Most records held while waiting for a gap to close (codex: 64). */
  readonly maxPendingRecords: number;
  /** Most ciphertext bytes held while waiting for a gap to close (codex: 1 MiB). */
  readonly maxPendingBytes: number;
}

export const DEFAULT_REORDER_LIMITS: ReorderLimits = {
  maxReorderDistance: 64,
  maxPendingRecords: 64,
  maxPendingBytes: 1024 * 1024,
};

const MAX_UINT32 = 0xffff_ffff;

export class OrderedCiphertextReceiver {
  private expected: number;
  private readonly pending = new Map<number, Uint8Array>();
  private pendingByteCount = 0;

  /** `startSeq` is 0 on a fresh stream; other values exist for tests. */
  constructor(
    private readonly limits: ReorderLimits = DEFAULT_REORDER_LIMITS,
    startSeq = 0,
  ) {
    this.expected = startSeq;
  }

  /** The seq the decryptor needs next. */
  get nextSeq(): number {
    return this.expected;
  }

  get pendingRecords(): number {
    return this.pending.size;
  }

  get pendingBytes(): number {
    return this.pendingByteCount;
  }

  /**
   * Accepts one data frame's ciphertext and returns the records that are now contiguous, in
   * seq order (possibly none). Duplicates and already-released seqs are silently ignored (the
   * first copy wins). Throws `RelayProtocolError` when the record lies beyond the window, the
   * buffer is full, or the sequence space is exhausted.
   */
  push(seq: number, ciphertext: Uint8Array): Uint8Array[] {
    if (!Number.isInteger(seq) || seq < 0 || seq > MAX_UINT32) {
      throw new RelayProtocolError(`relay data seq ${seq} is not a 32-bit unsigned integer`);
    }
    if (seq < this.expected || this.pending.has(seq)) return [];
    if (seq > this.expected) {
      if (seq - this.expected > this.limits.maxReorderDistance) {
        throw new RelayProtocolError('Noise relay ciphertext exceeds reorder window');
      }
      const bytes = this.pendingByteCount + ciphertext.length;
      if (
        this.pending.size >= this.limits.maxPendingRecords ||
        bytes > this.limits.maxPendingBytes
      ) {
        throw new RelayProtocolError('Noise relay pending ciphertext buffer is full');
      }
      this.pending.set(seq, ciphertext);
      this.pendingByteCount = bytes;
      return [];
    }
    const ready = [ciphertext];
    this.advance();
    for (let next = this.pending.get(this.expected); next; next = this.pending.get(this.expected)) {
      this.pending.delete(this.expected);
      this.pendingByteCount -= next.length;
      ready.push(next);
      this.advance();
    }
    return ready;
  }

  private advance(): void {
    if (this.expected === MAX_UINT32) {
      throw new RelayProtocolError('Noise relay sequence number exhausted');
    }
    this.expected += 1;
  }
}

/**
 * The sending side's counter: hands out 0, 1, 2, … and refuses to hand out 4294967295, the
 * last value, so the peer's receive counter can never overflow (codex errors the same way).
 */
export class OutboundSequence {
  /** `start` is 0 on a fresh stream; other values exist for tests. */
  constructor(private next = 0) {}

  /** The seq the next data frame will carry. */
  get peek(): number {
    return this.next;
  }

  take(): number {
    if (this.next >= MAX_UINT32) {
      throw new RelayProtocolError('Noise relay sequence number exhausted');
    }
    return this.next++;
  }
}
