/**
 * The protobuf wire format (https://protobuf.dev/programming-guides/encoding/), as much of it as
 * `RelayMessageFrame` needs: varints of up to 32 bits, length-delimited fields, and skipping the
 * fields a reader does not know. frames.ts builds the relay codec on it; spec/relay/frames.spec.ts
 * holds it to codex's vectors and to the generated reference codec (spec/relay/protobuf/).
 */

/** Wire types a field key can carry (groups, 3 and 4, are not supported). */
export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_FIXED32 = 5;

/** Malformed protobuf input; frames.ts reports it as a RelayProtocolError. */
export class ProtoWireError extends Error {}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** Reads fields from `bytes[start, end)` in order. */
export class ProtoReader {
  private at: number;

  constructor(
    private readonly bytes: Uint8Array,
    start = 0,
    private readonly end = bytes.length,
  ) {
    this.at = start;
  }

  get done(): boolean {
    return this.at >= this.end;
  }

  /** The next field's number and wire type. */
  key(): { field: number; wireType: number } {
    const key = this.varint32(true);
    const field = key >>> 3;
    if (field === 0) throw new ProtoWireError('field number 0 is illegal');
    return { field, wireType: key & 7 };
  }

  /**
   * A varint of up to ten bytes; its low 32 bits, unsigned (as `uint32` fields read). With
   * `exact`, a value of 2^32 or more is an error (a field key, as prost reads it).
   */
  varint32(exact = false): number {
    let value = 0;
    let high = 0;
    for (let index = 0, shift = 0; index < 10; index += 1, shift += 7) {
      if (this.at >= this.end) throw new ProtoWireError('premature end of input in a varint');
      const byte = this.bytes[this.at++]!;
      if (shift < 32) value |= (byte & 0x7f) << shift;
      high |= shift < 28 ? 0 : shift === 28 ? byte & 0x70 : byte & 0x7f;
      if ((byte & 0x80) !== 0) continue;
      if (exact && high !== 0) throw new ProtoWireError('field key larger than 32 bits');
      return value >>> 0;
    }
    throw new ProtoWireError('varint longer than ten bytes');
  }

  /** A length-delimited field's bytes: a view into the input, not a copy. */
  bytesField(): Uint8Array {
    const length = this.varint32();
    if (length > this.end - this.at) {
      throw new ProtoWireError('premature end of input in a length-delimited field');
    }
    const start = this.at;
    this.at += length;
    return this.bytes.subarray(start, this.at);
  }

  /** A string field, which must be UTF-8 (prost refuses anything else). */
  stringField(): string {
    try {
      return utf8Decoder.decode(this.bytesField());
    } catch (error) {
      if (error instanceof ProtoWireError) throw error;
      throw new ProtoWireError('string field is not valid utf-8');
    }
  }

  /** Skips the value of a field of `wireType`. */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint32();
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_LENGTH_DELIMITED:
        this.bytesField();
        return;
      case WIRE_FIXED32:
        this.advance(4);
        return;
      default:
        throw new ProtoWireError(`unsupported wire type ${wireType}`);
    }
  }

  /** Throws unless a field of `field` has the wire type its schema gives it. */
  expect(field: number, wireType: number, expected: number): void {
    if (wireType !== expected) {
      throw new ProtoWireError(`field ${field} has wire type ${wireType}, expected ${expected}`);
    }
  }

  private advance(count: number): void {
    if (count > this.end - this.at) throw new ProtoWireError('premature end of input');
    this.at += count;
  }
}

/** A field of a message being written: its bytes, laid out once the total size is known. */
type Piece =
  | { readonly kind: 'varint'; readonly field: number; readonly value: number }
  | { readonly kind: 'bytes'; readonly field: number; readonly value: Uint8Array }
  | { readonly kind: 'prefix'; readonly field: number; readonly value: number };

/** Writes fields in the order they are added; `finish()` returns the message's bytes. */
export class ProtoWriter {
  private readonly pieces: Piece[] = [];

  /** A `uint32` field; proto3 leaves out zero. */
  uint32(field: number, value: number): this {
    if (value !== 0) this.pieces.push({ kind: 'varint', field, value });
    return this;
  }

  /** A length-delimited field, written even when empty (message fields and set optionals). */
  bytes(field: number, value: Uint8Array): this {
    this.pieces.push({ kind: 'bytes', field, value });
    return this;
  }

  /**
   * Only the key and length of a length-delimited field of `length` bytes, whose value the
   * caller places right after the finished bytes (a payload written in place, not copied).
   */
  prefix(field: number, length: number): this {
    this.pieces.push({ kind: 'prefix', field, value: length });
    return this;
  }

  /** A string field, written even when empty (callers leave out what proto3 omits). */
  string(field: number, value: string): this {
    return this.bytes(field, utf8Encoder.encode(value));
  }

  /** Bytes `finish()` will return. */
  get length(): number {
    let length = 0;
    for (const piece of this.pieces) {
      length += varintLength(piece.field << 3);
      length +=
        piece.kind === 'bytes'
          ? varintLength(piece.value.length) + piece.value.length
          : varintLength(piece.value);
    }
    return length;
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const piece of this.pieces) {
      if (piece.kind === 'varint') {
        at = writeVarint(out, at, (piece.field << 3) | WIRE_VARINT);
        at = writeVarint(out, at, piece.value);
      } else if (piece.kind === 'prefix') {
        at = writeVarint(out, at, (piece.field << 3) | WIRE_LENGTH_DELIMITED);
        at = writeVarint(out, at, piece.value);
      } else {
        at = writeVarint(out, at, (piece.field << 3) | WIRE_LENGTH_DELIMITED);
        at = writeVarint(out, at, piece.value.length);
        out.set(piece.value, at);
        at += piece.value.length;
      }
    }
    return out;
  }
}

function varintLength(value: number): number {
  let length = 1;
  for (let rest = value >>> 7; rest !== 0; rest >>>= 7) length += 1;
  return length;
}

function writeVarint(out: Uint8Array, at: number, value: number): number {
  let rest = value >>> 0;
  while (rest >= 0x80) {
    out[at++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  out[at++] = rest;
  return at;
}
