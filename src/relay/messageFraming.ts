/**
 * Message framing inside the encrypted relay stream (noise-relay.md §5.2): each JSON-RPC
 * message is a 4-byte big-endian length prefix plus its UTF-8 JSON, cut into Noise records of
 * at most 61440 plaintext bytes. The prefix is encrypted, so it is authenticated, but it is
 * still bounded here so a misbehaving peer cannot grow the reassembly buffer without limit.
 */
import { type OperatorFunction, defer, mergeMap } from 'rxjs';
import { RelayProtocolError } from './relayProtocolError.js';

/** `NOISE_RECORD_PLAINTEXT_LEN`: plaintext bytes per Noise record (ciphertext ≤ 61456 B). */
export const NOISE_RECORD_PLAINTEXT_LEN = 60 * 1024;
/** `MAX_NOISE_JSONRPC_MESSAGE_LEN`: largest JSON-RPC message, prefix excluded. */
export const MAX_NOISE_JSONRPC_MESSAGE_LEN = 64 * 1024 * 1024;
export const LENGTH_PREFIX_BYTES = 4;

const INVALID_LENGTH = 'Noise relay JSON-RPC message has invalid length';
const utf8 = new TextEncoder();

/** Prefixes one JSON-RPC message (JSON text or its UTF-8 bytes) with its big-endian length. */
export function frameMessage(message: string | Uint8Array): Uint8Array {
  const json = typeof message === 'string' ? utf8.encode(message) : message;
  checkLength(json.length);
  const framed = new Uint8Array(LENGTH_PREFIX_BYTES + json.length);
  new DataView(framed.buffer).setUint32(0, json.length, false);
  framed.set(json, LENGTH_PREFIX_BYTES);
  return framed;
}

function checkLength(length: number): void {
  if (length > MAX_NOISE_JSONRPC_MESSAGE_LEN) {
    throw new RelayProtocolError('Noise relay JSON-RPC message exceeds maximum length');
  }
  if (length === 0) throw new RelayProtocolError(INVALID_LENGTH);
}

/** Cuts a byte stream into record-sized views (no copies); the last one may be shorter. */
export function splitIntoRecords(
  bytes: Uint8Array,
  recordLength = NOISE_RECORD_PLAINTEXT_LEN,
): Uint8Array[] {
  const records: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += recordLength) {
    records.push(bytes.subarray(offset, offset + recordLength));
  }
  return records;
}

/**
 * The plaintext records of one message, ready to be encrypted one by one. Each message is
 * chunked on its own, as codex's senders do: a record never holds parts of two messages.
 * Only the first record is a copy (it carries the prefix); the rest are views of `message`.
 */
export function messageToRecords(message: string | Uint8Array): Uint8Array[] {
  const json = typeof message === 'string' ? utf8.encode(message) : message;
  checkLength(json.length);
  const firstBodyBytes = NOISE_RECORD_PLAINTEXT_LEN - LENGTH_PREFIX_BYTES;
  const first = new Uint8Array(LENGTH_PREFIX_BYTES + Math.min(json.length, firstBodyBytes));
  new DataView(first.buffer).setUint32(0, json.length, false);
  first.set(json.subarray(0, firstBodyBytes), LENGTH_PREFIX_BYTES);
  const records: Uint8Array[] = [first];
  for (let offset = firstBodyBytes; offset < json.length; offset += NOISE_RECORD_PLAINTEXT_LEN) {
    records.push(json.subarray(offset, offset + NOISE_RECORD_PLAINTEXT_LEN));
  }
  return records;
}

/**
 * The first buffer of a message that spans records: four records' worth, so a `process/output`
 * notification (a 64 KiB pipe read, ~87 KiB of JSON) is copied once, not grown; a peer that
 * claims more and sends little still holds at most this (spec/fuzz/relay.fuzz.spec.ts, memory).
 */
const FIRST_BODY_BYTES = 4 * NOISE_RECORD_PLAINTEXT_LEN;

/**
 * Rebuilds whole messages from decrypted records taken in sequence order. Accepts messages
 * spanning records and records holding several messages (or the end of one and the start of
 * the next). Once it has thrown, the stream is unusable and every later `push` throws again.
 */
export class MessageReassembler {
  private readonly prefix = new Uint8Array(LENGTH_PREFIX_BYTES);
  private prefixFilled = 0;
  /**
   * The body so far. A message of up to `FIRST_BODY_BYTES` gets its whole buffer at once; a
   * longer one grows as bytes arrive (never past `bodyLength`), not sized by the prefix.
   */
  private body: Uint8Array | undefined;
  private bodyLength = 0;
  private bodyFilled = 0;
  private failure: RelayProtocolError | undefined;

  /** Bytes of a partly received message currently held (prefix included). */
  get bufferedBytes(): number {
    return this.prefixFilled + this.bodyFilled;
  }

  /**
   * Appends one decrypted record; returns the JSON bytes of every message it completed. A
   * message that lies wholly inside `record` is returned as a view of it (no copy), so the
   * caller must not change the record while it still uses those messages.
   */
  push(record: Uint8Array): Uint8Array[] {
    if (this.failure) throw this.failure;
    if (record.length > NOISE_RECORD_PLAINTEXT_LEN) {
      this.fail('Noise relay plaintext record exceeds maximum length');
    }
    const messages: Uint8Array[] = [];
    let offset = 0;
    while (offset < record.length) {
      if (this.body === undefined) {
        if (this.prefixFilled === 0 && record.length - offset >= LENGTH_PREFIX_BYTES) {
          // The common case: a whole prefix here, and often the whole message after it.
          const length = this.checkedLength(readLength(record, offset));
          offset += LENGTH_PREFIX_BYTES;
          if (length <= record.length - offset) {
            messages.push(record.subarray(offset, offset + length));
            offset += length;
            continue;
          }
          this.startBody(length);
        } else {
          const take = Math.min(LENGTH_PREFIX_BYTES - this.prefixFilled, record.length - offset);
          this.prefix.set(record.subarray(offset, offset + take), this.prefixFilled);
          this.prefixFilled += take;
          offset += take;
          if (this.prefixFilled < LENGTH_PREFIX_BYTES) break;
          this.startBody(this.checkedLength(readLength(this.prefix, 0)));
        }
      }
      const take = Math.min(this.bodyLength - this.bodyFilled, record.length - offset);
      const body = this.reserve(this.bodyFilled + take);
      body.set(record.subarray(offset, offset + take), this.bodyFilled);
      this.bodyFilled += take;
      offset += take;
      if (this.bodyFilled === this.bodyLength) {
        messages.push(body);
        this.body = undefined;
        this.bodyFilled = 0;
        this.prefixFilled = 0;
      }
    }
    return messages;
  }

  private startBody(length: number): void {
    this.body = new Uint8Array(Math.min(length, FIRST_BODY_BYTES));
    this.bodyLength = length;
    this.bodyFilled = 0;
    this.prefixFilled = LENGTH_PREFIX_BYTES;
  }

  /**
   * The body buffer, grown (doubling, capped at the declared length) to hold `bytes`: a peer
   * that claims 64 MiB and sends little holds little (spec/fuzz/relay.fuzz.spec.ts, memory).
   */
  private reserve(bytes: number): Uint8Array {
    const body = this.body!;
    if (bytes <= body.length) return body;
    const grown = new Uint8Array(Math.min(this.bodyLength, Math.max(bytes, body.length * 2)));
    grown.set(body.subarray(0, this.bodyFilled));
    this.body = grown;
    return grown;
  }

  /** A message's declared length, checked before waiting for (or allocating) its body. */
  private checkedLength(length: number): number {
    if (length === 0 || length > MAX_NOISE_JSONRPC_MESSAGE_LEN) this.fail(INVALID_LENGTH);
    return length;
  }

  private fail(detail: string): never {
    this.failure = new RelayProtocolError(detail);
    throw this.failure;
  }
}

/** The big-endian u32 at `offset`. */
function readLength(bytes: Uint8Array, offset: number): number {
  return (
    bytes[offset]! * 0x100_0000 +
    (bytes[offset + 1]! << 16) +
    (bytes[offset + 2]! << 8) +
    bytes[offset + 3]!
  );
}

/**
 * rxjs form of `MessageReassembler`: decrypted records in, whole messages (JSON bytes) out;
 * errors with `RelayProtocolError` on a bad record or length prefix.
 */
export function reassembleMessages(): OperatorFunction<Uint8Array, Uint8Array> {
  // One reassembler per subscription, so each subscriber sees a fresh stream.
  return (records) =>
    defer(() => {
      const reassembler = new MessageReassembler();
      return records.pipe(mergeMap((record) => reassembler.push(record)));
    });
}
