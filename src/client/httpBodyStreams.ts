/**
 * Routing of streamed HTTP response bodies (`http/request/bodyDelta`, spec/protocol.md §8.2).
 *
 * Each streamed request registers a route before the request is sent. Deltas must arrive
 * with contiguous `seq` from 1; a terminal frame (`done` or `error`) ends the route. Frames
 * that arrive before the body is subscribed are queued: at most 256 per stream and 16 MiB
 * across all streams of a session. Body streams never survive a transport loss.
 */
import { Observable, type Subscriber } from 'rxjs';
import { decodeValidatedBase64 } from '../protocol/base64.js';
import { ExecServerError, ProtocolError } from '../protocol/errors.js';
import type { HttpRequestBodyDeltaNotification } from '../protocol/http.js';
import {
  HTTP_BODY_DELTA_CHANNEL_CAPACITY,
  MAX_HTTP_BODY_DELTA_BASE64_CHARS,
  MAX_HTTP_BODY_DELTA_BYTES,
  MAX_QUEUED_HTTP_BODY_BYTES,
} from './limits.js';

/** Thrown by `checkDeltaSize`: a connection fault (the transport is closed and recovered). */
export function checkDeltaSize(deltaBase64: unknown): void {
  if (typeof deltaBase64 === 'string' && deltaBase64.length > MAX_HTTP_BODY_DELTA_BASE64_CHARS) {
    throw new ProtocolError(`http response body delta exceeds ${MAX_HTTP_BODY_DELTA_BYTES} bytes`);
  }
}

export class HttpBodyStreams {
  private readonly routes = new Map<string, HttpBodyStream>();
  /** Bytes queued (not yet handed to a subscriber) across every stream. */
  private queued = 0;

  /** Reserves `bytes` of the session's queue budget; false when it would be exceeded. */
  reserve(bytes: number): boolean {
    if (this.queued + bytes > MAX_QUEUED_HTTP_BODY_BYTES) return false;
    this.queued += bytes;
    return true;
  }

  /** Returns `bytes` reserved earlier. */
  release(bytes: number): void {
    this.queued -= bytes;
  }

  /** Registers a route; the id must be new (the client generates `http-<n>`). */
  register(requestId: string): HttpBodyStream {
    if (this.routes.has(requestId)) {
      throw new ProtocolError(`http response stream already registered for request ${requestId}`);
    }
    const stream = new HttpBodyStream(requestId, this);
    this.routes.set(requestId, stream);
    return stream;
  }

  /** Removes a route if it still points at `stream`. */
  remove(stream: HttpBodyStream): void {
    if (this.routes.get(stream.requestId) === stream) this.routes.delete(stream.requestId);
  }

  /**
   * Routes one delta. Deltas for unknown ids are ignored (the stream may have ended). Throws
   * a ProtocolError for an oversize delta: the caller treats that as a connection fault.
   */
  dispatch(delta: HttpRequestBodyDeltaNotification): void {
    checkDeltaSize(delta.deltaBase64);
    const stream = this.routes.get(delta.requestId);
    if (stream === undefined) return;
    const bytes = decodeValidatedBase64(delta.deltaBase64);
    if (bytes.byteLength > MAX_HTTP_BODY_DELTA_BYTES) {
      throw new ProtocolError(
        `http response body delta exceeds ${MAX_HTTP_BODY_DELTA_BYTES} bytes`,
      );
    }
    stream.accept(delta.seq, bytes, delta.done, delta.error);
  }

  /** Fails every stream (transport loss, retirement, session failure) and clears the table. */
  failAll(error: ExecServerError): void {
    const streams = [...this.routes.values()];
    this.routes.clear();
    for (const stream of streams) stream.fail(error);
  }

  get size(): number {
    return this.routes.size;
  }
}

type Terminal = { kind: 'done' } | { kind: 'failed'; error: ExecServerError };

export class HttpBodyStream {
  private expectedSeq = 1;
  private readonly queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private terminal: Terminal | undefined;
  private consumer: Subscriber<Uint8Array> | undefined;
  private consumed = false;

  constructor(
    readonly requestId: string,
    private readonly streams: HttpBodyStreams,
  ) {}

  /**
   * The body, chunk by chunk; completes at EOF, errors with a ProtocolError when the server
   * reports a failure or breaks the sequence, and with a DisconnectedError when the transport
   * is lost. Can be subscribed once; unsubscribing early abandons the body.
   */
  readonly body$: Observable<Uint8Array> = new Observable<Uint8Array>((subscriber) => {
    if (this.consumed) {
      subscriber.error(
        new ProtocolError(`http response stream \`${this.requestId}\` body can only be read once`),
      );
      return;
    }
    this.consumed = true;
    this.consumer = subscriber;
    while (this.queue.length > 0 && !subscriber.closed) {
      const chunk = this.queue.shift()!;
      this.release(chunk.byteLength);
      subscriber.next(chunk);
    }
    this.deliverTerminal();
    return () => {
      this.consumer = undefined;
      this.abandon();
    };
  });

  accept(seq: number, bytes: Uint8Array, done: boolean, error: string | null): void {
    if (this.terminal !== undefined) return;
    if (seq !== this.expectedSeq) {
      this.finish({
        kind: 'failed',
        error: new ProtocolError(
          `http response stream \`${this.requestId}\` received seq ${seq}, expected ${this.expectedSeq}`,
        ),
      });
      return;
    }
    this.expectedSeq += 1;
    if (bytes.byteLength > 0) this.push(bytes);
    if (this.terminal !== undefined) return;
    if (error !== null) {
      this.finish({
        kind: 'failed',
        error: new ProtocolError(`http response stream \`${this.requestId}\` failed: ${error}`),
      });
    } else if (done) {
      this.finish({ kind: 'done' });
    }
  }

  fail(error: ExecServerError): void {
    if (this.terminal !== undefined) return;
    this.finish({ kind: 'failed', error });
  }

  private push(bytes: Uint8Array): void {
    if (this.consumer !== undefined) {
      this.consumer.next(bytes);
      return;
    }
    if (this.queue.length >= HTTP_BODY_DELTA_CHANNEL_CAPACITY) {
      this.overflow('body delta channel filled before delivery');
      return;
    }
    if (!this.streams.reserve(bytes.byteLength)) {
      this.overflow(`queued body deltas exceed ${MAX_QUEUED_HTTP_BODY_BYTES} bytes`);
      return;
    }
    this.queue.push(bytes);
    this.queuedBytes += bytes.byteLength;
  }

  private overflow(detail: string): void {
    this.finish({
      kind: 'failed',
      error: new ProtocolError(`http response stream \`${this.requestId}\` failed: ${detail}`),
    });
  }

  private finish(terminal: Terminal): void {
    this.terminal = terminal;
    this.streams.remove(this);
    this.deliverTerminal();
  }

  private deliverTerminal(): void {
    const consumer = this.consumer;
    if (consumer === undefined || this.terminal === undefined) return;
    if (this.terminal.kind === 'done') consumer.complete();
    else consumer.error(this.terminal.error);
  }

  private abandon(): void {
    this.dropQueue();
    if (this.terminal === undefined) {
      this.terminal = { kind: 'done' };
      this.streams.remove(this);
    }
  }

  private dropQueue(): void {
    this.queue.length = 0;
    this.release(this.queuedBytes);
  }

  private release(bytes: number): void {
    this.queuedBytes -= bytes;
    this.streams.release(bytes);
  }
}
