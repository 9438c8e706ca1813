/**
 * The sending half of a Noise relay stream's transport phase (noise-relay.md §5.2–5.3), tuned
 * for large messages: the JSON text is written once, straight after its 4-byte length prefix,
 * into one buffer whose 61440-byte slices are the records, so no record is copied before it is
 * encrypted. Records, seqs and frames are exactly those of the relay layer's
 * `RelayDataSender` (each message chunked on its own; seq from 0 = the AEAD nonce).
 */
import { platform } from '../platform/index.js';
import {
  dataFrame,
  LENGTH_PREFIX_BYTES,
  MAX_NOISE_JSONRPC_MESSAGE_LEN,
  NOISE_RECORD_PLAINTEXT_LEN,
  OutboundSequence,
  RelayProtocolError,
  type RecordCipher,
  type RelayDataFrame,
  type RelayTraceContext,
} from '../relay/index.js';

export class NoiseRecordSender {
  private readonly sequence = new OutboundSequence();

  constructor(
    readonly streamId: string,
    private readonly cipher: Pick<RecordCipher, 'encrypt'>,
  ) {}

  /**
   * The data frames of one JSON-RPC text, in send order. Throws `RelayProtocolError` for an
   * empty or oversize message (over 64 MiB) and when the sequence space is exhausted.
   */
  send(message: string, trace?: RelayTraceContext): RelayDataFrame[] {
    return this.sendPacked([message], trace); // one text packed alone: records as §5.2 cuts them
  }

  /**
   * The data frames of several JSON-RPC texts packed back to back: each text gets its own
   * length prefix, and the prefixed texts are cut together into records of at most 61440
   * bytes, so many small messages share one record (receivers must accept that, §5.2 step 4).
   * `trace`, when given, belongs to the first message and rides on the first frame only.
   * Throws like `send` for an empty or oversize message; nothing is encrypted in that case.
   */
  sendPacked(messages: readonly string[], trace?: RelayTraceContext): RelayDataFrame[] {
    const lengths = messages.map((message) => platform.utf8ByteLength(message));
    let total = 0;
    for (const length of lengths) {
      if (length > MAX_NOISE_JSONRPC_MESSAGE_LEN) {
        throw new RelayProtocolError('Noise relay JSON-RPC message exceeds maximum length');
      }
      if (length === 0)
        throw new RelayProtocolError('Noise relay JSON-RPC message has invalid length');
      total += LENGTH_PREFIX_BYTES + length;
    }
    const packed = new Uint8Array(total);
    const view = new DataView(packed.buffer);
    let position = 0;
    messages.forEach((message, index) => {
      const length = lengths[index] ?? 0;
      view.setUint32(position, length);
      platform.utf8EncodeInto(message, packed, position + LENGTH_PREFIX_BYTES);
      position += LENGTH_PREFIX_BYTES + length;
    });
    const frames: RelayDataFrame[] = [];
    for (let offset = 0; offset < packed.length; offset += NOISE_RECORD_PLAINTEXT_LEN) {
      const record = packed.subarray(offset, offset + NOISE_RECORD_PLAINTEXT_LEN);
      frames.push(
        dataFrame(
          this.streamId,
          this.sequence.take(),
          this.cipher.encrypt(record),
          offset === 0 ? trace : undefined,
        ),
      );
    }
    return frames;
  }
}
