import { isUtf8 } from 'node:buffer';
import type { Socket } from 'node:net';
import { TextDecoder } from 'node:util';
import { Subject, type Subscription, interval, map } from 'rxjs';
import { DisconnectedError, DisconnectReason } from '../protocol/errors.js';
import type { BackpressureTransport } from './backpressure.js';
import { smallTextFrame } from './fastpath/smallTextFrame.js';
import { undecodableJsonError } from './jsonSyntax.js';
import type { SplitText, SplitTextTransport } from './splitText.js';
import type { UndecodableMessageTransport } from './undecodableMessage.js';
import { WebSocketFrameReader, type FrameReaderSink } from './webSocketFrameReader.js';
import { OPCODE } from '../platform/webSocketOpcodes.js';

const FIN = 0x80;
/** An empty Ping, the binary's keepalive. */
const PING_FRAME = Buffer.from([0x89, 0x00]);

/** Length of the header of an unmasked frame with a payload of `length` bytes (RFC 6455 §5.2). */
function frameHeaderLength(length: number): number {
  return length < 126 ? 2 : length < 65_536 ? 4 : 10;
}

/** Writes the header of an unmasked, unfragmented Text frame at `offset`; returns its end. */
function writeTextFrameHeader(target: Buffer, offset: number, length: number): number {
  target[offset] = FIN | OPCODE.text;
  if (length < 126) {
    target[offset + 1] = length;
    return offset + 2;
  }
  if (length < 65_536) {
    target[offset + 1] = 126;
    target.writeUInt16BE(length, offset + 2);
    return offset + 4;
  }
  target[offset + 1] = 127;
  target.writeUInt32BE(Math.floor(length / 2 ** 32), offset + 2);
  target.writeUInt32BE(length >>> 0, offset + 6);
  return offset + 10;
}

/** An outbound message waiting for the end of the turn, with its UTF-8 length. */
interface PendingMessage {
  readonly text: string | SplitText;
  readonly bytes: number;
}

/** Bytes the Text frames of `messages` take. */
function framesLength(messages: readonly PendingMessage[]): number {
  let total = 0;
  for (const { bytes } of messages) total += frameHeaderLength(bytes) + bytes;
  return total;
}

/** Writes the Text frames of `messages` back to back into `target` (big enough). */
function writeTextFrames(target: Buffer, messages: readonly PendingMessage[]): void {
  let offset = 0;
  for (const { text, bytes } of messages) {
    offset = writeTextFrameHeader(target, offset, bytes);
    if (typeof text === 'string') {
      offset += target.write(text, offset, 'utf8');
    } else {
      offset += target.write(text.head, offset, 'utf8');
      offset += target.write(text.ascii, offset, 'latin1'); // ASCII: one byte per character
      offset += target.write(text.tail, offset, 'utf8');
    }
  }
}

/** A pending message for `text`. */
function pendingMessage(text: string | SplitText): PendingMessage {
  const bytes =
    typeof text === 'string'
      ? Buffer.byteLength(text)
      : Buffer.byteLength(text.head) + text.ascii.length + Buffer.byteLength(text.tail);
  return { text, bytes };
}

/** Unsent bytes above which the socket reports itself backed up (and Pongs wait, see `ping`). */
const BACKLOG_LIMIT_BYTES = 512 * 1024;
/**
 * Unsent bytes above which the connection stops reading the peer until they have gone: a peer
 * that sends requests (or Pings) and never reads the answers then meets TCP flow control
 * instead of growing this process's memory. Guarded by acceptedWebSocket.spec.ts ("stops
 * reading a peer that does not read its replies").
 */
export const INBOUND_PAUSE_BYTES = 4 * 1024 * 1024;

export interface AcceptedWebSocketOptions {
  /** Send a WebSocket Ping this often. Default: no pings. */
  readonly keepaliveIntervalMs?: number;
}

/**
 * Takes over `socket`, upgraded to a WebSocket (its `101` already written); `head` holds any
 * bytes that came behind the handshake. Subscribe to `incoming$` synchronously: messages are
 * not buffered.
 */
export function acceptedWebSocket(
  socket: Socket,
  head: Buffer,
  options: AcceptedWebSocketOptions = {},
): SplitTextTransport & BackpressureTransport & UndecodableMessageTransport {
  return new AcceptedWebSocket(socket, head, options);
}

class AcceptedWebSocket
  implements SplitTextTransport, BackpressureTransport, UndecodableMessageTransport, FrameReaderSink
{
  /** Texts, and large Text messages as their checked UTF-8 (FrameReaderSink `textUtf8`). */
  private readonly incoming = new Subject<string | Buffer>();
  readonly incomingUtf8$ = this.incoming.asObservable();
  readonly incoming$ = this.incoming.pipe(
    map((message) => (typeof message === 'string' ? message : message.toString())),
  );
  private readonly reader = new WebSocketFrameReader(this);
  private readonly keepalive: Subscription | undefined;
  /** Messages sent this turn, written together once it ends. */
  private pending: PendingMessage[] = [];
  private undecodable: ((detail: string) => void) | undefined;
  /** The Pong for the latest Ping while the socket is backed up; written once it drains. */
  private heldPong: Buffer | undefined;
  /** True while reading is paused for a backlog (see INBOUND_PAUSE_BYTES). */
  private inputPaused = false;
  private finished = false;

  constructor(
    private readonly socket: Socket,
    head: Buffer,
    options: AcceptedWebSocketOptions,
  ) {
    socket.setNoDelay(true);
    socket.setTimeout(0);
    socket.on('data', (chunk: Buffer) => this.reader.push(chunk));
    socket.on('end', () => this.hangUp('the connection ended without a Close frame'));
    socket.on('error', (error: Error) => this.hangUp(error.message, error));
    socket.on('close', () => this.finish('the connection closed'));
    this.keepalive =
      options.keepaliveIntervalMs === undefined
        ? undefined
        : interval(options.keepaliveIntervalMs).subscribe(() => this.writeNow(PING_FRAME));
    if (socket.destroyed) this.finish('the connection closed');
    else if (head.length > 0) this.reader.push(head);
  }

  /** A reply or a lone notification: written at once unless output is waiting before it. */
  send(message: string): void {
    if (this.finished) return;
    const small = this.pending.length === 0 ? smallTextFrame(message) : undefined;
    if (small !== undefined) {
      this.socket.write(small, 'latin1');
      this.throttleInput();
      return;
    }
    if (this.pending.push(pendingMessage(message)) === 1) this.flush();
  }

  /** Process output: comes in bursts (one per pipe read), so it waits for the end of the turn. */
  sendSplit(text: SplitText): void {
    if (this.finished) return;
    if (this.pending.push(pendingMessage(text)) === 1) queueMicrotask(this.flush);
  }

  onUndecodable(handler: (detail: string) => void): void {
    this.undecodable = handler;
  }

  get backedUp(): boolean {
    return this.socket.writableLength > BACKLOG_LIMIT_BYTES;
  }

  onceDrained(drained: () => void): void {
    this.socket.once('drain', drained);
  }

  /** Writes what is pending, then closes the TCP connection (no Close frame, as the binary). */
  close(): void {
    if (this.finished) return;
    this.flush();
    this.hangUp();
  }

  // FrameReaderSink: what the peer sent.

  text(message: string): void {
    if (!this.finished) this.incoming.next(message);
  }

  textUtf8(utf8: Buffer): void {
    if (!this.finished) this.incoming.next(utf8);
  }

  binary(data: Buffer): void {
    if (this.finished) return;
    if (isUtf8(data)) {
      this.incoming.next(data.toString());
      return;
    }
    const detail = undecodableJsonError(data);
    // Without a handler (or, in theory, valid after all) the lossy text goes on as it is.
    if (detail !== undefined && this.undecodable) this.undecodable(detail);
    else this.incoming.next(new TextDecoder().decode(data));
  }

  /**
   * Answers at once, unless the socket is backed up: then only the latest Ping's Pong waits for
   * the drain (RFC 6455 §5.5.3 allows answering just the most recent Ping), so a Ping flood from
   * a peer that does not read holds one Pong, not one per Ping (the binary queues them all).
   */
  ping(payload: Buffer): void {
    const frame = Buffer.allocUnsafe(2 + payload.length);
    frame[0] = FIN | OPCODE.pong;
    frame[1] = payload.length;
    payload.copy(frame, 2);
    if (this.heldPong !== undefined) {
      this.heldPong = frame;
    } else if (!this.backedUp) {
      this.writeNow(frame);
    } else {
      this.heldPong = frame;
      this.socket.once('drain', () => {
        const pong = this.heldPong;
        this.heldPong = undefined;
        if (pong !== undefined) this.writeNow(pong);
      });
    }
  }

  peerClosed(): void {
    this.hangUp();
  }

  violation(reason: string): void {
    this.hangUp(`the peer broke the WebSocket protocol: ${reason}`);
  }

  /** Writes the messages sent so far as frames in one buffer, with one socket write. */
  private readonly flush = (): void => {
    const messages = this.pending;
    if (messages.length === 0) return;
    this.pending = [];
    if (this.finished) return; // closed meanwhile: the frames have nowhere to go
    const frames = Buffer.allocUnsafe(framesLength(messages));
    writeTextFrames(frames, messages);
    this.socket.write(frames);
    this.throttleInput();
  };

  /** A control frame: between two whole writes of ours, so never inside another frame. */
  private writeNow(frame: Buffer): void {
    if (this.finished) return;
    this.socket.write(frame);
    this.throttleInput();
  }

  /** Stops reading the peer while more than INBOUND_PAUSE_BYTES wait to be sent. */
  private throttleInput(): void {
    if (this.inputPaused || this.socket.writableLength <= INBOUND_PAUSE_BYTES) return;
    this.inputPaused = true;
    this.socket.pause();
    this.socket.once('drain', () => {
      this.inputPaused = false;
      if (!this.finished) this.socket.resume();
    });
  }

  /**
   * Ends the connection, cleanly or for `failure`: stops reading, and closes our side of the
   * TCP connection once what is written has gone.
   */
  private hangUp(failure?: string, cause?: Error): void {
    this.finish(failure, cause);
    this.reader.stop();
    if (this.socket.destroyed || this.socket.writableEnded) return;
    this.socket.end(() => this.socket.destroy());
  }

  /** Completes `incoming$`, or errors it when the connection failed; only the first call counts. */
  private finish(failure?: string, cause?: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.pending = [];
    this.keepalive?.unsubscribe();
    if (failure === undefined) {
      this.incoming.complete();
    } else {
      this.incoming.error(
        new DisconnectedError(`${DisconnectReason.transportDisconnected}: ${failure}`, { cause }),
      );
    }
  }
}
