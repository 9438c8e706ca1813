/**
 * The reading side of our client WebSocket (fastpath/webSocketClient.ts): the frames a server
 * sends (RFC 6455 §5), with the checks and limits `ws` applies on a client — server frames are
 * unmasked, reserved bits and unknown opcodes are refused, control frames are short and whole,
 * a Text message is UTF-8, a message is at most `maxPayload` bytes (checked from the frame
 * headers, before its bytes are gathered). A violation throws `FrameError` with the close
 * code to answer with; reading then stops for good.
 *
 * A frame that sits inside one chunk is handed on as a view of it (no copy); only a frame
 * split across chunks, and a fragmented message, are gathered into a buffer of their own.
 * Guarded by spec/platform/node/fastpath/webSocketClient.spec.ts.
 */
import { isUtf8 } from 'node:buffer';
import { OPCODE } from '../../webSocketOpcodes.js';

/** The close code of a Close frame without one (RFC 6455 §7.1.5). */
export const CLOSE_NO_STATUS = 1005;

const EMPTY = Buffer.alloc(0);

/** A protocol violation by the server, with the close code (§7.4.1) we answer it with. */
export class FrameError extends Error {
  constructor(
    readonly closeCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'FrameError';
  }
}

/** Where the reader's findings go, in the order the frames arrived. */
export interface ServerFrameSink {
  /** A whole message: its bytes, and whether it was Binary (a Text one is checked UTF-8). */
  message(data: Buffer, isBinary: boolean): void;
  ping(payload: Buffer): void;
  pong(): void;
  /** The server's Close frame: its code (CLOSE_NO_STATUS when it had none) and reason. */
  close(code: number, reason: Buffer): void;
}

/** Whether `code` may appear in a Close frame (RFC 6455 §7.4, as `ws` checks it). */
export function isValidCloseCode(code: number): boolean {
  return (
    (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) ||
    (code >= 3000 && code <= 4999)
  );
}

type Step =
  | { readonly kind: 'header' }
  | {
      readonly kind: 'length';
      readonly bytes: 2 | 8;
      readonly fin: boolean;
      readonly opcode: number;
    }
  | {
      readonly kind: 'payload';
      readonly length: number;
      readonly fin: boolean;
      readonly opcode: number;
    }
  | { readonly kind: 'ended' };

export class ServerFrameReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private step: Step = { kind: 'header' };
  /** The opcode of the message whose fragments are being gathered (0: none). */
  private messageOpcode = 0;
  private fragments: Buffer[] = [];
  private messageBytes = 0;

  /** `maxPayload`: the largest message accepted (0: no limit). */
  constructor(
    private readonly maxPayload: number,
    private readonly sink: ServerFrameSink,
  ) {}

  /** Adds `chunk` and reads every frame it completes; throws FrameError on a violation. */
  push(chunk: Buffer): void {
    if (chunk.length > 0 && this.step.kind !== 'ended') {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    for (;;) {
      // Re-read each time round: a frame may end reading (a Close frame, a violation).
      const step: Step = this.step;
      if (step.kind === 'ended') return;
      if (step.kind === 'header') {
        if (this.buffered < 2) return;
        this.header(this.take(2));
      } else if (step.kind === 'length') {
        if (this.buffered < step.bytes) return;
        this.payloadStep(step.fin, step.opcode, this.length(this.take(step.bytes)));
      } else {
        if (this.buffered < step.length) return;
        this.step = { kind: 'header' };
        this.frame(step.fin, step.opcode, step.length === 0 ? EMPTY : this.take(step.length));
      }
    }
  }

  /** Stops reading: nothing more is parsed or delivered. */
  end(): void {
    this.step = { kind: 'ended' };
    this.chunks.length = 0;
    this.buffered = 0;
    this.fragments = [];
  }

  private header(bytes: Buffer): void {
    const first = bytes[0]!;
    const second = bytes[1]!;
    const fin = (first & 0x80) !== 0;
    const opcode = first & 0x0f;
    if ((first & 0x70) !== 0) {
      this.fail(1002, `RSV${first & 0x40 ? 1 : first & 0x20 ? 2 : 3} must be clear`);
    }
    if ((second & 0x80) !== 0) this.fail(1002, 'MASK must be clear (a server does not mask)');
    const length = second & 0x7f;
    if (opcode >= OPCODE.close) {
      if (opcode > OPCODE.pong) this.fail(1002, `unknown opcode ${opcode}`);
      if (!fin) this.fail(1002, 'FIN must be set on a control frame');
      if (length > 125) this.fail(1002, 'a control frame carries at most 125 bytes');
    } else if (opcode === OPCODE.continuation) {
      if (this.messageOpcode === 0)
        this.fail(1002, 'a continuation frame (opcode 0) without a message');
    } else if (opcode === OPCODE.text || opcode === OPCODE.binary) {
      if (this.messageOpcode !== 0) {
        this.fail(1002, `opcode ${opcode} inside a fragmented message (a continuation expected)`);
      }
    } else {
      this.fail(1002, `unknown opcode ${opcode}`);
    }
    if (length === 126) this.step = { kind: 'length', bytes: 2, fin, opcode };
    else if (length === 127) this.step = { kind: 'length', bytes: 8, fin, opcode };
    else this.payloadStep(fin, opcode, length);
  }

  private length(bytes: Buffer): number {
    if (bytes.length === 2) return bytes.readUInt16BE(0);
    const high = bytes.readUInt32BE(0);
    // 2^53 - 1 is the largest length a JavaScript number holds exactly.
    if (high > 0x1f_ffff) this.fail(1009, 'a payload length over 2^53 - 1');
    return high * 0x1_0000_0000 + bytes.readUInt32BE(4);
  }

  private payloadStep(fin: boolean, opcode: number, length: number): void {
    if (
      opcode < OPCODE.close &&
      this.maxPayload > 0 &&
      this.messageBytes + length > this.maxPayload
    ) {
      // `ws`'s words, which the transports' errors carry on (spec/transport/webSocketTransport.spec.ts).
      throw this.ended(new FrameError(1009, 'Max payload size exceeded'));
    }
    this.step = { kind: 'payload', length, fin, opcode };
  }

  private frame(fin: boolean, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case OPCODE.ping:
        this.sink.ping(payload);
        return;
      case OPCODE.pong:
        this.sink.pong();
        return;
      case OPCODE.close:
        this.closeFrame(payload);
        return;
    }
    if (opcode !== OPCODE.continuation) this.messageOpcode = opcode;
    if (fin && this.fragments.length === 0) {
      this.deliver(payload);
      return;
    }
    this.fragments.push(payload);
    this.messageBytes += payload.length;
    if (!fin) return;
    const whole = Buffer.concat(this.fragments, this.messageBytes);
    this.fragments = [];
    this.messageBytes = 0;
    this.deliver(whole);
  }

  private deliver(data: Buffer): void {
    const isBinary = this.messageOpcode === OPCODE.binary;
    this.messageOpcode = 0;
    if (!isBinary && !isUtf8(data)) this.fail(1007, 'a Text message that is not UTF-8');
    this.sink.message(data, isBinary);
  }

  private closeFrame(payload: Buffer): void {
    if (payload.length === 1) this.fail(1002, 'a Close frame of 1 byte');
    const code = payload.length === 0 ? CLOSE_NO_STATUS : payload.readUInt16BE(0);
    if (payload.length > 0 && !isValidCloseCode(code)) this.fail(1002, `close code ${code}`);
    const reason = payload.subarray(2);
    if (!isUtf8(reason)) this.fail(1007, 'a Close reason that is not UTF-8');
    this.end();
    this.sink.close(code, reason);
  }

  /** The first `count` buffered bytes (a view when one chunk holds them, else a copy). */
  private take(count: number): Buffer {
    this.buffered -= count;
    const first = this.chunks[0]!;
    if (count === first.length) {
      this.chunks.shift();
      return first;
    }
    if (count < first.length) {
      this.chunks[0] = first.subarray(count);
      return first.subarray(0, count);
    }
    const gathered = Buffer.allocUnsafe(count);
    let offset = 0;
    while (offset < count) {
      const chunk = this.chunks[0]!;
      const used = Math.min(chunk.length, count - offset);
      chunk.copy(gathered, offset, 0, used);
      offset += used;
      if (used === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(used);
    }
    return gathered;
  }

  private fail(closeCode: number, message: string): never {
    throw this.ended(
      new FrameError(closeCode, `invalid WebSocket frame from the server: ${message}`),
    );
  }

  private ended(error: FrameError): FrameError {
    this.end();
    return error;
  }
}
