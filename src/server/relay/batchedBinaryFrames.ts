/**
 * Sealed data frames of a server-side relay WebSocket written straight onto the TCP socket it
 * was upgraded from, as unmasked Binary frames (RFC 6455 §5.2) back to back in reused 256 KiB
 * buffers, one socket write per buffer instead of one `ws.send` (a corked two-chunk `writev`)
 * per sealed 61440-byte record (spec/server/relay/batchedBinaryFrames.spec.ts;
 * `bench/noise-throughput.ts`, figures in docs/performance.md). `ws` keeps the handshake, the
 * reading side and its own frames (ping, pong, close), which it writes synchronously (no
 * compression is negotiated), so they never land inside ours as long as every batch is written
 * out before control returns (`flush` at the end of each batch), and ours stop once `ws` has
 * left the OPEN state.
 */
import type { Writable } from 'node:stream';
import type { SealedFrameSink } from './packedRecordWriter.js';

const FIN_BINARY = 0x82;

/** Length of the header of an unmasked frame with a payload of `length` bytes. */
function frameHeaderLength(length: number): number {
  return length < 126 ? 2 : length < 65_536 ? 4 : 10;
}

function writeBinaryFrameHeader(target: Buffer, offset: number, length: number): void {
  target[offset] = FIN_BINARY;
  if (length < 126) {
    target[offset + 1] = length;
  } else if (length < 65_536) {
    target[offset + 1] = 126;
    target.writeUInt16BE(length, offset + 2);
  } else {
    target[offset + 1] = 127;
    target.writeUInt32BE(Math.floor(length / 2 ** 32), offset + 2);
    target.writeUInt32BE(length >>> 0, offset + 6);
  }
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
}

export class BatchedBinaryFrames implements SealedFrameSink {
  private readonly spareSlabs: Buffer[] = [];
  private slab: Buffer | undefined;
  private used = 0;
  /** Where the frame handed out by `frameBuffer` goes: its buffer and header position. */
  private pending: { target: Buffer; headerAt: number; own: boolean } | undefined;

  constructor(private readonly socket: BatchedFrameSocket) {}

  frameBuffer(length: number): Buffer {
    const header = frameHeaderLength(length);
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
    writeBinaryFrameHeader(pending.target, pending.headerAt, frame.length);
    const end = pending.headerAt + frameHeaderLength(frame.length) + frame.length;
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
