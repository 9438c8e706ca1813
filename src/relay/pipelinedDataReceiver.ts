/**
 * `RelayDataReceiver` for a cipher that decrypts asynchronously (WebCrypto in browsers): each
 * record's decryption starts as its frame arrives, so several run at once, while results are
 * reassembled and handed out strictly in frame order. Each `receive` settles exactly as
 * `RelayDataReceiver.receive` would have returned or thrown for that frame (same messages,
 * same `RelayProtocolError`); after the first failure every later frame fails with it too.
 * spec/relay/pipelinedDataReceiver.spec.ts holds it to the synchronous receiver.
 */
import { decryptionFailed } from './dataStream.js';
import type { RelayDataFrame } from './frames.js';
import { MessageReassembler } from './messageFraming.js';
import {
  DEFAULT_REORDER_LIMITS,
  OrderedCiphertextReceiver,
  type ReorderLimits,
} from './orderedReceiver.js';

/** A record cipher whose decryption is asynchronous; called once per record, in seq order. */
export interface AsyncRecordDecrypter {
  decryptAsync(ciphertext: Uint8Array): Promise<Uint8Array>;
}

export class PipelinedRelayDataReceiver {
  private readonly ordered: OrderedCiphertextReceiver;
  private readonly reassembler = new MessageReassembler();
  /** Settles when the previous frame's result has been produced. */
  private previous: Promise<unknown> = Promise.resolve();
  private failure: unknown;

  constructor(
    private readonly cipher: AsyncRecordDecrypter,
    limits: ReorderLimits = DEFAULT_REORDER_LIMITS,
  ) {
    this.ordered = new OrderedCiphertextReceiver(limits);
  }

  /** The frame's whole messages, or its `RelayProtocolError`; results settle in call order. */
  receive(frame: RelayDataFrame): Promise<Uint8Array[]> {
    let opened: Promise<Uint8Array>[] = [];
    let reorderError: unknown;
    try {
      opened = this.ordered.push(frame.seq, frame.payload).map((c) => this.cipher.decryptAsync(c));
    } catch (error) {
      reorderError = error;
    }
    // Handled in order below; this only keeps an early rejection from being reported as unhandled.
    for (const record of opened) record.catch(() => undefined);
    const result = this.previous.then(async () => {
      if (this.failure !== undefined) throw this.failure;
      try {
        if (reorderError !== undefined) throw reorderError;
        const messages: Uint8Array[] = [];
        for (const record of opened) {
          let plaintext: Uint8Array;
          try {
            plaintext = await record;
          } catch (error) {
            throw decryptionFailed(error);
          }
          messages.push(...this.reassembler.push(plaintext));
        }
        return messages;
      } catch (error) {
        this.failure = error;
        throw error;
      }
    });
    this.previous = result.catch(() => undefined);
    return result;
  }
}
