/**
 * The executor's outbound records on one relay stream (noise-relay.md §5.2–5.3), built with as
 * few copies and allocations as its plain WebSocket output:
 *
 * - the texts queued in one turn are written, each after its 4-byte length prefix, into one
 *   shared plaintext scratch buffer (a `process/output` text arrives as a `SplitText`, so its
 *   base64 chunk is copied byte for byte, never joined into a new string or scanned as UTF-8);
 * - each 61440-byte slice of that buffer is one record, sealed straight into the buffer of the
 *   data frame that carries it, behind the frame's header (no record, ciphertext or frame
 *   copies, and frame buffers come from the sink, which reuses them once written).
 *
 * Records, seqs (= nonces) and frames are byte for byte those of `NoiseRecordSender.sendPacked`
 * for the same texts: many small messages share one record, which receivers accept (§5.2).
 */
import type { TransportCipher } from '../../noise/index.js';
import {
  dataFrameEnvelope,
  LENGTH_PREFIX_BYTES,
  MAX_NOISE_JSONRPC_MESSAGE_LEN,
  NOISE_RECORD_PLAINTEXT_LEN,
  OutboundSequence,
  RelayProtocolError,
  type RelayTraceContext,
} from '../../relay/index.js';
import type { SplitText } from '../splitText.js';

/** One outbound JSON text: whole, or in pieces (`head + ascii + tail`). */
export type OutboundText = string | SplitText;

/** Where sealed frames go: the relay socket, which owns the frame buffers. */
export interface SealedFrameSink {
  /** A buffer of at least `length` bytes to encode one frame into. */
  frameBuffer(length: number): Buffer;
  /** Sends `frame`, a view of the start of `buffer` (which came from `frameBuffer`). */
  sendFrame(frame: Buffer, buffer: Buffer): void;
  /** Called once every frame of a batch has been sent (a sink may hold them until then). */
  flushFrames?(): void;
}

/** AEAD tag bytes each record grows by when sealed. */
const TAG_BYTES = 16;

/**
 * Plaintext is packed here; a batch larger than this gets a buffer of its own. One buffer serves
 * every stream: a batch is packed and sealed within one synchronous call.
 */
export const PACKED_SCRATCH_BYTES = 1024 * 1024;
let scratch: Buffer | undefined;

/** UTF-8 length of `text`. */
export function utf8Length(text: OutboundText): number {
  return typeof text === 'string'
    ? Buffer.byteLength(text, 'utf8')
    : Buffer.byteLength(text.head, 'utf8') +
        text.ascii.length +
        Buffer.byteLength(text.tail, 'utf8');
}

/** Writes `text` at `offset`; returns the bytes written. */
function writeText(target: Buffer, offset: number, text: OutboundText): number {
  if (typeof text === 'string') return target.write(text, offset, 'utf8');
  let at = offset;
  at += target.write(text.head, at, 'utf8');
  at += target.write(text.ascii, at, 'latin1'); // ASCII: one byte per character
  at += target.write(text.tail, at, 'utf8');
  return at - offset;
}

export class PackedRecordWriter {
  private readonly sequence = new OutboundSequence();

  constructor(
    readonly streamId: string,
    private readonly cipher: Pick<TransportCipher, 'encryptInto'>,
    private readonly sink: SealedFrameSink,
  ) {}

  /**
   * Sends `texts` (whose UTF-8 lengths are `lengths`) packed back to back into records, one data
   * frame each. `trace`, when given, belongs to the first text and rides on the first frame
   * only (§5.4). Throws `RelayProtocolError` for an empty or oversize text (over 64 MiB) or a
   * non-canonical stream id (before anything is sealed), and when the sequence space is
   * exhausted or a trace makes the first frame too large; the stream cannot continue after
   * any of these.
   */
  write(
    texts: readonly OutboundText[],
    lengths: readonly number[],
    trace?: RelayTraceContext,
  ): void {
    if (this.streamId.trim() === '' || this.streamId.trim() !== this.streamId) {
      throw new RelayProtocolError('relay message frame stream_id is not canonical');
    }
    let total = 0;
    for (const length of lengths) {
      if (length > MAX_NOISE_JSONRPC_MESSAGE_LEN) {
        throw new RelayProtocolError('Noise relay JSON-RPC message exceeds maximum length');
      }
      if (length === 0) {
        throw new RelayProtocolError('Noise relay JSON-RPC message has invalid length');
      }
      total += LENGTH_PREFIX_BYTES + length;
    }
    if (total === 0) return;
    const plaintext =
      total <= PACKED_SCRATCH_BYTES
        ? (scratch ??= Buffer.allocUnsafeSlow(PACKED_SCRATCH_BYTES))
        : Buffer.allocUnsafe(total);
    let at = 0;
    for (let index = 0; index < texts.length; index++) {
      const length = lengths[index]!;
      plaintext.writeUInt32BE(length, at);
      at += LENGTH_PREFIX_BYTES;
      if (writeText(plaintext, at, texts[index]!) !== length) {
        throw new RelayProtocolError('Noise relay JSON-RPC message length changed while sending');
      }
      at += length;
    }
    let recordTrace = trace;
    try {
      for (let offset = 0; offset < total; offset += NOISE_RECORD_PLAINTEXT_LEN) {
        const record = plaintext.subarray(
          offset,
          Math.min(total, offset + NOISE_RECORD_PLAINTEXT_LEN),
        );
        this.sendRecord(record, recordTrace);
        recordTrace = undefined;
      }
    } finally {
      this.sink.flushFrames?.();
    }
  }

  private sendRecord(record: Buffer, trace: RelayTraceContext | undefined): void {
    const seq = this.sequence.take();
    const payloadLength = record.length + TAG_BYTES;
    const { head, tail, length } = dataFrameEnvelope(this.streamId, seq, payloadLength, trace);
    const buffer = this.sink.frameBuffer(length);
    buffer.set(head, 0);
    this.cipher.encryptInto(record, buffer, head.length);
    buffer.set(tail, head.length + payloadLength);
    this.sink.sendFrame(buffer.subarray(0, length), buffer);
  }
}
