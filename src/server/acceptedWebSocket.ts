/**
 * The Transport of one WebSocket the executor's listener accepted. Inbound it behaves like
 * `fromWebSocket` (Text or UTF-8 Binary messages; a clean close completes, anything else
 * errors); outbound it writes the frames itself, straight onto the upgraded TCP socket:
 *
 * - process output sent in one turn of the event loop (a 64 KiB pipe read gives eight 8 KiB
 *   `process/output` notifications) becomes unmasked Text frames back to back in one buffer,
 *   written with one socket write at the end of the turn, and any message sent behind it
 *   joins that write; other messages are written at once, header and payload in one buffer
 *   — where `ws` writes each string payload and its header as two chunks through a corked
 *   stream;
 * - `process/output` texts arrive in pieces (`SplitText`), so their base64 chunk is copied
 *   into the buffer once, without being joined into a new string or scanned as UTF-8.
 *
 * Both are what make replies and output cheaper than through `ws.send`. `ws` still owns the
 * handshake, the reading side, pings/pongs and the close handshake; its own frames (pong,
 * ping, close) are written synchronously by its sender (no compression is negotiated), so
 * they never land inside one of ours. Pending frames are flushed before any close.
 */
import type { Duplex } from 'node:stream';
import { type Subscription, interval } from 'rxjs';
import WebSocket from 'ws';
import { DisconnectedError, DisconnectReason, ProtocolError } from '../protocol/errors.js';
import { DirectSubject } from '../transport/directSubject.js';
import { webSocketMessageText } from '../transport/webSocketMessageText.js';
import type { Transport } from '../transport/transport.js';
import type { BackpressureTransport } from './backpressure.js';
import type { SplitText, SplitTextTransport } from './splitText.js';

const OPCODE_TEXT = 0x1;
const FIN = 0x80;

/** Length of the header of an unmasked frame with a payload of `length` bytes (RFC 6455 §5.2). */
function frameHeaderLength(length: number): number {
  return length < 126 ? 2 : length < 65_536 ? 4 : 10;
}

/** Writes the header of an unmasked, unfragmented Text frame at `offset`; returns its end. */
function writeTextFrameHeader(target: Buffer, offset: number, length: number): number {
  target[offset] = FIN | OPCODE_TEXT;
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

/** The Text frames of `messages`, back to back in one new buffer. */
export function textFrames(messages: readonly PendingMessage[]): Buffer {
  const target = Buffer.allocUnsafe(framesLength(messages));
  writeTextFrames(target, messages);
  return target;
}

/** A pending message for `text`. */
export function pendingMessage(text: string | SplitText): PendingMessage {
  const bytes =
    typeof text === 'string'
      ? Buffer.byteLength(text)
      : Buffer.byteLength(text.head) + text.ascii.length + Buffer.byteLength(text.tail);
  return { text, bytes };
}

/**
 * Frames are assembled in reusable buffers of this size (bigger batches get their own): a
 * fresh buffer per write is external memory to V8, and at output rates of ~100 MB/s that
 * memory made it run a full garbage collection every few MiB.
 */
const SLAB_BYTES = 256 * 1024;
/** Slabs kept for reuse; more are only in flight while the socket is backed up. */
const SPARE_SLABS = 4;

/** Unsent bytes above which the socket reports itself backed up. */
const BACKLOG_LIMIT_BYTES = 512 * 1024;

export interface AcceptedWebSocketOptions {
  /** Send a WebSocket Ping this often. Default: no pings. */
  readonly keepaliveIntervalMs?: number;
}

/**
 * Wraps `socket` (as handed over by `WebSocketServer.handleUpgrade`) and `raw`, the TCP socket
 * it was upgraded from. Subscribe to `incoming$` synchronously: messages are not buffered.
 */
export function acceptedWebSocket(
  socket: WebSocket,
  raw: Duplex,
  options: AcceptedWebSocketOptions = {},
): Transport {
  return new AcceptedWebSocket(socket, raw, options);
}

class AcceptedWebSocket implements SplitTextTransport, BackpressureTransport {
  /** Hot; delivers straight to its subscribers (see DirectSubject). */
  private readonly incoming = new DirectSubject<string>();
  readonly incoming$ = this.incoming.observable;
  private readonly keepalive: Subscription | undefined;
  /** Output buffers whose writes have completed, for reuse. */
  private readonly spareSlabs: Buffer[] = [];
  /** Messages sent this turn, written together once it ends. */
  private pending: PendingMessage[] = [];
  private closedByUs = false;
  private finished = false;
  private lastError: Error | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly raw: Duplex,
    options: AcceptedWebSocketOptions,
  ) {
    socket.on('message', (data: WebSocket.RawData, isBinary: boolean) =>
      this.receive(data, isBinary),
    );
    socket.on('error', (error: Error) => (this.lastError = error));
    socket.on('close', (code: number, reason: Buffer) => this.onClose(code, reason));
    this.keepalive =
      options.keepaliveIntervalMs === undefined
        ? undefined
        : interval(options.keepaliveIntervalMs).subscribe(() => {
            if (socket.readyState === WebSocket.OPEN) socket.ping();
          });
    if (socket.readyState !== WebSocket.OPEN) {
      this.finish(new DisconnectedError(DisconnectReason.transportDisconnected));
    }
  }

  /** A reply or a lone notification: written at once unless output is waiting before it. */
  send(message: string): void {
    if (this.finished || this.socket.readyState !== WebSocket.OPEN) return;
    this.pending.push(pendingMessage(message));
    if (this.pending.length === 1) this.flush();
  }

  /** Process output: comes in bursts (one per pipe read), so it waits for the end of the turn. */
  sendSplit(text: SplitText): void {
    if (this.finished || this.socket.readyState !== WebSocket.OPEN) return;
    if (this.pending.push(pendingMessage(text)) === 1) queueMicrotask(this.flush);
  }

  get backedUp(): boolean {
    return this.raw.writableLength > BACKLOG_LIMIT_BYTES;
  }

  onceDrained(drained: () => void): void {
    this.raw.once('drain', drained);
  }

  close(): void {
    if (this.closedByUs) return;
    this.flush();
    this.closedByUs = true;
    this.finish();
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
  }

  /** Writes the messages sent so far as frames in one buffer, with one socket write. */
  private readonly flush = (): void => {
    const messages = this.pending;
    if (messages.length === 0) return;
    this.pending = [];
    // Closed meanwhile (by the peer, or the socket failed): the frames have nowhere to go.
    if (this.socket.readyState !== WebSocket.OPEN) return;
    const length = framesLength(messages);
    if (length > SLAB_BYTES) {
      this.raw.write(textFrames(messages));
      return;
    }
    const slab = this.spareSlabs.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES);
    writeTextFrames(slab, messages);
    // Once written the slab is free again (the callback also runs when the write fails).
    this.raw.write(slab.subarray(0, length), () => {
      if (this.spareSlabs.length < SPARE_SLABS) this.spareSlabs.push(slab);
    });
  };

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.finished) return;
    const text = webSocketMessageText(data, isBinary);
    if (text !== undefined) {
      this.deliver(text);
      return;
    }
    this.finish(
      new ProtocolError('exec-server sent a binary WebSocket message that is not valid UTF-8'),
    );
    this.closedByUs = true;
    this.socket.close(1007, 'invalid UTF-8');
  }

  private deliver(text: string): void {
    this.incoming.next(text);
  }

  private onClose(code: number, reason: Buffer): void {
    if (this.closedByUs || code === 1000 || code === 1001) return this.finish();
    const detail =
      this.lastError?.message ??
      `connection closed with code ${code}${reason.length > 0 ? ` (${reason.toString('utf8')})` : ''}`;
    this.finish(
      new DisconnectedError(`${DisconnectReason.transportDisconnected}: ${detail}`, {
        cause: this.lastError,
      }),
    );
  }

  private finish(error?: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.keepalive?.unsubscribe();
    if (error) this.incoming.error(error);
    else this.incoming.complete();
  }
}
