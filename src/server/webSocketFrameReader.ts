/**
 * The reading side of an accepted WebSocket (RFC 6455 §5), with the limits and strictness of
 * the binary's tungstenite server: client frames must be masked, reserved bits and opcodes
 * are refused, control frames are short and unfragmented, a frame carries at most 16 MiB
 * and a message at most 64 MiB, and a Text message must be UTF-8. A violation ends reading
 * (the binary then drops the connection without a Close frame).
 *
 * Frames usually arrive whole, one or more per socket read; such a frame is unmasked in
 * place, and a Text message is decoded straight from the chunk. Only a frame split across
 * reads, and a fragmented message, are gathered into a buffer of their own (GrowableBuffer:
 * memory in proportion to the bytes, however small the pieces they come in).
 *
 * A sink that takes `textUtf8` gets a Text message of TEXT_BYTES_FROM bytes or more as its
 * checked UTF-8 instead of a string, so that it need not decode all of it (a `process/write`
 * is read from its bytes: fastpath/processWriteFrame.ts).
 */
import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { GrowableBuffer } from './growableBuffer.js';
import { ASCII_TEXT_FROM_CHUNK, decodeUtf8 } from './fastpath/frameText.js';
import { unmaskPayload } from './fastpath/nativeUnmask.js';
import { OPCODE } from '../platform/webSocketOpcodes.js';

/** tungstenite's default `max_frame_size`. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** tungstenite's default `max_message_size` (axum does not change it). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Text messages at least this long go to a sink's `textUtf8` as bytes, when it has one. */
export const TEXT_BYTES_FROM = 16 * 1024;

/** Where the reader's findings go, in the order the frames arrived. */
export interface FrameReaderSink {
  /** A whole Text message, decoded (its UTF-8 checked). */
  text(message: string): void;
  /**
   * Optional: a whole Text message of TEXT_BYTES_FROM bytes or more, as valid UTF-8 (checked),
   * instead of `text`. The reader never changes these bytes again; the sink may keep them.
   */
  textUtf8?(utf8: Buffer): void;
  /** A whole Binary message; `data` is only valid during the call. */
  binary(data: Buffer): void;
  /** A Ping with its payload (the caller answers with a Pong). */
  ping(payload: Buffer): void;
  /** The peer sent a Close frame; nothing after it is read. */
  peerClosed(): void;
  /** The peer broke the protocol; nothing after it is read. */
  violation(reason: string): void;
}

export interface FrameReaderLimits {
  readonly maxFrameBytes?: number;
  readonly maxMessageBytes?: number;
}

/** Bytes a frame needs before it can be read, or a verdict. */
const INCOMPLETE = 0;
const STOPPED = -1;

export class WebSocketFrameReader {
  private readonly maxFrameBytes: number;
  private readonly maxMessageBytes: number;
  /** Bytes of an incomplete frame, and how many the frame (or its header) needs in all. */
  private readonly partial = new GrowableBuffer();
  private needed = 0;
  /** The fragments of a message still in progress, and its opcode (0 when none). */
  private readonly fragments = new GrowableBuffer();
  private fragmentsAscii = true;
  private messageOpcode = 0;
  /** Checks a fragmented Text message's UTF-8 as it arrives (tungstenite fails at once). */
  private textCheck: TextDecoder | undefined;
  private stopped = false;

  constructor(
    private readonly sink: FrameReaderSink,
    limits: FrameReaderLimits = {},
  ) {
    this.maxFrameBytes = limits.maxFrameBytes ?? MAX_FRAME_BYTES;
    this.maxMessageBytes = limits.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  }

  /** Reads the frames in `chunk` (the reader may change its bytes: frames are unmasked in place). */
  push(chunk: Buffer): void {
    if (this.stopped) return;
    let data = chunk;
    if (this.partial.length > 0) {
      this.partial.append(chunk);
      if (this.partial.length < this.needed) return;
      data = this.partial.take();
    }
    let offset = 0;
    while (offset < data.length) {
      const read = this.readFrame(data, offset);
      if (read === STOPPED) return;
      if (read === INCOMPLETE) {
        // Not reserved up front: a header alone must not make the reader take 16 MiB.
        this.partial.append(data.subarray(offset));
        return;
      }
      offset += read;
    }
  }

  /** Reads the frame at `offset`: returns its length, INCOMPLETE (setting `needed`) or STOPPED. */
  private readFrame(data: Buffer, offset: number): number {
    const available = data.length - offset;
    if (available < 2) return this.need(2);
    const first = data[offset] as number;
    const second = data[offset + 1] as number;
    const fin = (first & 0x80) !== 0;
    const opcode = first & 0x0f;
    if ((first & 0x70) !== 0) return this.violate('reserved bits are set');
    if ((second & 0x80) === 0) return this.violate('a client frame is not masked');
    let length = second & 0x7f;
    let header = 6;
    if (length === 126) {
      header = 8;
      if (available < 4) return this.need(4);
      length = data.readUInt16BE(offset + 2);
    } else if (length === 127) {
      header = 14;
      if (available < 10) return this.need(10);
      // Anything at or above 2^32 is far beyond the frame limit.
      if (data.readUInt32BE(offset + 2) !== 0) return this.violate('frame too long');
      length = data.readUInt32BE(offset + 6);
    }
    const refusal = this.refusal(opcode, fin, length);
    if (refusal !== undefined) return this.violate(refusal);
    if (available < header + length) return this.need(header + length);
    const start = offset + header;
    const end = start + length;
    const ascii = unmaskPayload(data, start, end);
    if (ASCII_TEXT_FROM_CHUNK && ascii && fin && opcode === OPCODE.text) {
      // The common case, decoded from the chunk without a view of the payload (no `subarray`).
      // ASCII needs no UTF-8 check.
      if (length >= TEXT_BYTES_FROM && this.sink.textUtf8 !== undefined)
        this.sink.textUtf8(data.subarray(start, end));
      else this.sink.text(decodeUtf8(data, start, end));
      return this.stopped ? STOPPED : header + length;
    }
    return this.take(opcode, fin, data.subarray(start, end), ascii) ? header + length : STOPPED;
  }

  /** Why a frame with this header is refused, or undefined when it is acceptable. */
  private refusal(opcode: number, fin: boolean, length: number): string | undefined {
    if (opcode >= OPCODE.close) {
      if (opcode > OPCODE.pong) return `reserved opcode ${opcode}`;
      if (!fin) return 'a control frame is fragmented';
      if (length > 125) return 'a control frame is longer than 125 bytes';
      return undefined;
    }
    if (opcode > OPCODE.binary) return `reserved opcode ${opcode}`;
    if (opcode === OPCODE.continuation && this.messageOpcode === 0)
      return 'a continuation frame without a message to continue';
    if (opcode !== OPCODE.continuation && this.messageOpcode !== 0)
      return 'a new message started before the previous one was finished';
    if (length > this.maxFrameBytes)
      return `frame of ${length} bytes is over the limit of ${this.maxFrameBytes}`;
    if (this.fragments.length + length > this.maxMessageBytes)
      return `message is over the limit of ${this.maxMessageBytes} bytes`;
    return undefined;
  }

  /** Acts on one whole frame; false once reading has stopped. */
  private take(opcode: number, fin: boolean, payload: Buffer, ascii: boolean): boolean {
    switch (opcode) {
      case OPCODE.ping:
        this.sink.ping(payload);
        return !this.stopped;
      case OPCODE.pong:
        return true;
      case OPCODE.close:
        this.stopped = true;
        this.sink.peerClosed();
        return false;
    }
    if (fin && opcode !== OPCODE.continuation) return this.deliver(opcode, payload, ascii);
    if (opcode !== OPCODE.continuation) this.messageOpcode = opcode;
    // Until a fragment is not ASCII there is nothing to check, nor any partial character.
    if (this.messageOpcode === OPCODE.text && !fin && !(ascii && this.fragmentsAscii)) {
      this.textCheck ??= new TextDecoder('utf-8', { fatal: true });
      try {
        this.textCheck.decode(payload, { stream: true });
      } catch {
        this.violate('a Text message is not valid UTF-8');
        return false;
      }
    }
    this.fragments.append(payload);
    this.fragmentsAscii &&= ascii;
    if (!fin) return true;
    const message = this.fragments.take();
    const messageOpcode = this.messageOpcode;
    const messageAscii = this.fragmentsAscii;
    this.fragmentsAscii = true;
    this.messageOpcode = 0;
    this.textCheck = undefined;
    return this.deliver(messageOpcode, message, messageAscii);
  }

  private deliver(opcode: number, data: Buffer, ascii: boolean): boolean {
    if (opcode === OPCODE.binary) {
      this.sink.binary(data);
    } else if (!(ascii || isUtf8(data))) {
      this.violate('a Text message is not valid UTF-8');
      return false;
    } else if (data.length >= TEXT_BYTES_FROM && this.sink.textUtf8 !== undefined) {
      this.sink.textUtf8(data);
    } else {
      this.sink.text(decodeUtf8(data, 0, data.length));
    }
    return !this.stopped;
  }

  private need(bytes: number): number {
    this.needed = bytes;
    return INCOMPLETE;
  }

  private violate(reason: string): number {
    this.stop();
    this.sink.violation(reason);
    return STOPPED;
  }

  /** Stops reading: later chunks are ignored. */
  stop(): void {
    this.stopped = true;
    this.partial.clear();
    this.fragments.clear();
  }
}
