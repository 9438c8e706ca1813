/**
 * Sealed data frames of a relay WebSocket written straight onto its TCP socket, as Binary frames
 * (RFC 6455 §5.2) back to back in reused 256 KiB buffers, one socket write per buffer instead of
 * one `ws.send` per sealed 61440-byte record: a server's frames unmasked (`ws` would write each
 * as a corked two-chunk `writev`), a client's masked in place (`ws` copies each masked frame
 * into a fresh buffer) (spec/server/relay/batchedBinaryFrames.spec.ts;
 * `bench/noise-throughput.ts`, figures in docs/performance.md). `ws` keeps the handshake, the
 * reading side and its own frames (ping, pong, close), which it writes synchronously (no
 * compression is negotiated), so they never land inside ours as long as every batch is written
 * out before control returns (`flush` at the end of each batch), and ours stop once `ws` has
 * left the OPEN state.
 */
import type { Writable } from 'node:stream';
import { maskInPlace, writeMaskKey } from './frameMask.js';
import type { SealedFrameSink } from './packedRecordWriter.js';

const FIN_BINARY = 0x82;
const MASKED = 0x80;
const MASK_KEY_BYTES = 4;

/** Length of the header of a frame with a payload of `length` bytes. */
function frameHeaderLength(length: number, masked: boolean): number {
  return (length < 126 ? 2 : length < 65_536 ? 4 : 10) + (masked ? MASK_KEY_BYTES : 0);
}

/** Writes the header at `offset`; a masked frame's payload, which follows it, is masked too. */
function writeBinaryFrame(target: Buffer, offset: number, length: number, masked: boolean): void {
  target[offset] = FIN_BINARY;
  let at = offset + 2;
  if (length < 126) {
    target[offset + 1] = length;
  } else if (length < 65_536) {
    target[offset + 1] = 126;
    target.writeUInt16BE(length, at);
    at += 2;
  } else {
    target[offset + 1] = 127;
    target.writeUInt32BE(Math.floor(length / 2 ** 32), at);
    target.writeUInt32BE(length >>> 0, at + 4);
    at += 8;
  }
  if (!masked) return;
  target[offset + 1]! |= MASKED;
  const key = writeMaskKey(target, at);
  at += MASK_KEY_BYTES;
  maskInPlace(target.subarray(at, at + length), key);
}

/** Frames are assembled in reusable buffers of this size (four sealed records fit). */
const SLAB_BYTES = 256 * 1024;
/** Slabs kept for reuse; more are only in flight while the socket is backed up. */
const SPARE_SLABS = 4;

export interface BatchedFrameSocket {
  /** The upgraded TCP socket. */
  readonly raw: Writable;
  /** False once frames must no longer be written (the WebSocket left the OPEN state). */
  readonly open: boolean;
  /** Called once `bytes` written by one socket write have left (or failed). */
  written(bytes: number, error: Error | null | undefined): void;
  /** Called as `bytes` are handed to the socket. */
  writing(bytes: number): void;
  /** True on the client end of the WebSocket, which masks every frame (RFC 6455 §5.3). */
  readonly masked?: boolean;
}

export class BatchedBinaryFrames implements SealedFrameSink {
  private readonly spareSlabs: Buffer[] = [];
  private slab: Buffer | undefined;
  private used = 0;
  /** Where the frame handed out by `frameBuffer` goes: its buffer and header position. */
  private pending: { target: Buffer; headerAt: number; own: boolean } | undefined;

  private readonly masked: boolean;

  constructor(private readonly socket: BatchedFrameSocket) {
    this.masked = socket.masked ?? false;
  }

  frameBuffer(length: number): Buffer {
    const header = frameHeaderLength(length, this.masked);
    if (header + length > SLAB_BYTES) {
      const own = Buffer.allocUnsafe(header + length);
      this.pending = { target: own, headerAt: 0, own: true };
      return own.subarray(header);
    }
    if (this.slab && this.used + header + length > SLAB_BYTES) this.flush();
    const slab = (this.slab ??= this.spareSlabs.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES));
    this.pending = { target: slab, headerAt: this.used, own: false };
    return slab.subarray(this.used + header, this.used + header + length);
  }

  sendFrame(frame: Buffer): void {
    const pending = this.pending;
    this.pending = undefined;
    if (!pending || !this.socket.open) return;
    writeBinaryFrame(pending.target, pending.headerAt, frame.length, this.masked);
    const end = pending.headerAt + frameHeaderLength(frame.length, this.masked) + frame.length;
    if (pending.own) {
      this.flush(); // what came before goes first
      this.write(pending.target.subarray(0, end), undefined);
      return;
    }
    this.used = end;
  }

  /** Writes the frames assembled so far with one socket write. */
  flush(): void {
    const slab = this.slab;
    if (!slab) return;
    const used = this.used;
    this.slab = undefined;
    this.used = 0;
    if (used === 0 || !this.socket.open) {
      this.recycle(slab);
      return;
    }
    this.write(slab.subarray(0, used), slab);
  }

  private write(bytes: Buffer, slab: Buffer | undefined): void {
    const length = bytes.length;
    this.socket.writing(length);
    // The callback also runs when the write fails; only then may the slab be reused.
    this.socket.raw.write(bytes, (error) => {
      if (slab) this.recycle(slab);
      this.socket.written(length, error);
    });
  }

  private recycle(slab: Buffer): void {
    if (this.spareSlabs.length < SPARE_SLABS) this.spareSlabs.push(slab);
  }
}
