/**
 * The transport phase of one relay stream, minus the socket (noise-relay.md §5): outbound
 * messages become length-prefixed records, each encrypted once and carried by one data frame
 * whose seq equals its nonce; inbound data frames are reordered, decrypted and reassembled.
 * The Noise cipher comes from `src/noise`; only its two record operations are needed here.
 */
import { type RelayDataFrame, type RelayTraceContext, dataFrame } from './frames.js';
import { MessageReassembler, messageToRecords } from './messageFraming.js';
import {
  DEFAULT_REORDER_LIMITS,
  OrderedCiphertextReceiver,
  OutboundSequence,
  type ReorderLimits,
} from './orderedReceiver.js';
import { RelayProtocolError } from './relayProtocolError.js';

/**
 * One direction of an established Noise transport. Nonces are implicit: `encrypt` and
 * `decrypt` must be called exactly once per record, in seq order.
 */
export interface RecordCipher {
  encrypt(plain: Uint8Array): Uint8Array;
  decrypt(cipher: Uint8Array): Uint8Array;
}

/** Turns outbound JSON-RPC messages into data frames for one stream. */
export class RelayDataSender {
  private readonly sequence: OutboundSequence;

  constructor(
    readonly streamId: string,
    private readonly cipher: Pick<RecordCipher, 'encrypt'>,
    sequence?: OutboundSequence,
  ) {
    this.sequence = sequence ?? new OutboundSequence();
  }

  /**
   * The data frames of one message, to be sent in order. Pass `trace` only for a request that
   * carries one: it is copied in the clear onto the first frame alone (§5.4).
   */
  send(message: string | Uint8Array, trace?: RelayTraceContext): RelayDataFrame[] {
    return messageToRecords(message).map((record, index) =>
      dataFrame(
        this.streamId,
        this.sequence.take(),
        this.cipher.encrypt(record),
        index === 0 ? trace : undefined,
      ),
    );
  }
}

/** Turns inbound data frames of one stream into whole messages (JSON bytes). */
export class RelayDataReceiver {
  private readonly ordered: OrderedCiphertextReceiver;
  private readonly reassembler = new MessageReassembler();

  constructor(
    private readonly cipher: Pick<RecordCipher, 'decrypt'>,
    limits: ReorderLimits = DEFAULT_REORDER_LIMITS,
  ) {
    this.ordered = new OrderedCiphertextReceiver(limits);
  }

  /** Throws `RelayProtocolError` on a reorder, decryption or framing failure. */
  receive(frame: RelayDataFrame): Uint8Array[] {
    const messages: Uint8Array[] = [];
    for (const ciphertext of this.ordered.push(frame.seq, frame.payload)) {
      let plaintext: Uint8Array;
      try {
        plaintext = this.cipher.decrypt(ciphertext);
      } catch (error) {
        throw decryptionFailed(error);
      }
      messages.push(...this.reassembler.push(plaintext));
    }
    return messages;
  }
}

/** The error a record that does not decrypt ends the stream with (codex's text). */
export function decryptionFailed(error: unknown): RelayProtocolError {
  const detail = error instanceof Error ? error.message : String(error);
  return new RelayProtocolError(`Noise relay decryption failed: ${detail}`, { cause: error });
}
