/**
 * The plain WebSocket transport (spec/protocol.md §1.1): one JSON-RPC message per WebSocket
 * message, Text frames out, Text or Binary (UTF-8) frames in, pings answered by `ws` itself.
 */
import { asyncScheduler, interval, map, Observable, Subject, type SchedulerLike } from 'rxjs';
import {
  ConnectError,
  DisconnectedError,
  DisconnectReason,
  MessageTooLargeError,
  ProtocolError,
  TimeoutError,
} from '../protocol/errors.js';
import {
  platform,
  WEBSOCKET_CLOSED,
  WEBSOCKET_CLOSING,
  WEBSOCKET_CONNECTING,
  WEBSOCKET_OPEN,
  type PlatformWebSocket,
  type RefusedUpgrade,
  type WebSocketData,
  type WebSocketTlsOptions,
} from '../platform/index.js';
import { validateWebSocketHeaders } from './webSocketHeaders.js';
import { webSocketMessage } from './webSocketMessageText.js';
import { errorMessage } from './errorMessage.js';
import { formatDuration } from './formatDuration.js';
import type { Transport } from './transport.js';

/**
 * What the executor's WebSocket server reads (tungstenite's defaults, not changed by the
 * binary): frames of at most 16 MiB, messages of at most 64 MiB. A bigger frame or message
 * makes it drop the connection, so longer messages go out in several frames, and messages
 * over the limit are refused before anything is sent.
 */
const MAX_OUTBOUND_FRAME_BYTES = 16 * 1024 * 1024;
const MAX_OUTBOUND_MESSAGE_BYTES = 64 * 1024 * 1024;

/** At most this much of a refused upgrade's answer goes into the ConnectError. */
const MAX_REFUSAL_TEXT_CHARS = 200;

/** Default WebSocket open deadline (`CONNECT_TIMEOUT`, spec §18.1). */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** Options of `connectWebSocket`: deadline, upgrade headers, TLS and proxy. */
export interface WebSocketConnectOptions {
  /** Deadline for the opening handshake. Default 10 s. */
  connectTimeoutMs?: number;
  /**
   * Extra HTTP headers on the upgrade request (e.g. authorization). Handshake headers (Host,
   * Connection, Upgrade, Content-Length, Transfer-Encoding, Sec-WebSocket-*) and `Origin` are
   * refused with ProtocolError before anything is sent. A browser always sends `Origin`
   * and cannot send extra headers (a non-empty map fails there).
   */
  headers?: Record<string, string>;
  /** TLS settings for `wss://` (trusted CAs, client certificate, SNI name). */
  tls?: WebSocketTlsOptions;
  /** Connect through this HTTP proxy (`http://[user:password@]host:port`, CONNECT tunnel). */
  proxy?: string;
  /**
   * A capability token or signed JWT for an executor started with `--ws-auth`, sent as
   * `Authorization: Bearer <token>` (the only place the executor reads it).
   */
  bearerToken?: string;
  /** Largest inbound message accepted; a bigger one drops the connection. Default: `ws` default (100 MiB). */
  maxPayloadBytes?: number;
  /** Scheduler for the connect deadline (tests pass a TestScheduler). */
  scheduler?: SchedulerLike;
}

/** Options of `fromWebSocket` on a socket you opened yourself. */
export interface WebSocketTransportOptions {
  /** Send a WebSocket Ping this often (accepted sockets and the executor listener use 30 s). Default: no pings. */
  keepaliveIntervalMs?: number;
  /** Scheduler for the keepalive pings. */
  scheduler?: SchedulerLike;
}

/** The upgrade header that presents `token` to an executor started with `--ws-auth`. */
export function bearerAuthorization(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

/**
 * Opens a WebSocket to an exec-server. Cold: each subscription opens one socket, emits the
 * Transport once the socket is open, then completes. Unsubscribing before that aborts the socket.
 * Errors: `ConnectError` (refused, bad URL, HTTP rejection), `TimeoutError` (deadline passed).
 */
export function connectWebSocket(
  url: string,
  options: WebSocketConnectOptions = {},
): Observable<Transport> {
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const scheduler = options.scheduler ?? asyncScheduler;
  return new Observable<Transport>((subscriber) => {
    let socket: PlatformWebSocket;
    const headers =
      options.bearerToken === undefined
        ? options.headers
        : { ...options.headers, ...bearerAuthorization(options.bearerToken) };
    try {
      if (headers !== undefined) validateWebSocketHeaders(headers);
    } catch (error) {
      subscriber.error(error);
      return undefined;
    }
    try {
      socket = platform.openWebSocket(url, {
        ...(headers === undefined ? {} : { headers }),
        ...(options.maxPayloadBytes === undefined ? {} : { maxPayload: options.maxPayloadBytes }),
        ...(options.tls === undefined ? {} : { tls: options.tls }),
        ...(options.proxy === undefined ? {} : { proxy: options.proxy }),
      });
    } catch (error) {
      subscriber.error(
        new ConnectError(
          `failed to connect to exec-server websocket \`${url}\`: ${errorMessage(error)}`,
          {
            cause: error,
          },
        ),
      );
      return undefined;
    }
    let opened = false;
    let settled = false;
    // Attached until the Transport takes the socket over, and after an abort for the socket's
    // whole life: `ws` emits 'error' when a CONNECTING socket is aborted, and an EventEmitter
    // 'error' without a listener would crash the process.
    const onConnectError = (error: Error): void => {
      if (settled) return;
      subscriber.error(
        new ConnectError(
          `failed to connect to exec-server websocket \`${url}\`: ${error.message}`,
          {
            cause: error,
          },
        ),
      );
    };
    const onConnectClose = (code: number): void => {
      // A close before 'open' without an 'error' first (should not happen with ws, but be safe).
      subscriber.error(
        new ConnectError(
          `failed to connect to exec-server websocket \`${url}\`: connection closed (code ${code})`,
        ),
      );
    };
    // The deadline is cleared by the teardown, once the Transport was handed on.
    const onOpen = (): void => {
      opened = true;
      detachConnectListeners();
      const transport = fromWebSocket(socket);
      socket.off('error', onConnectError);
      subscriber.next(transport);
      subscriber.complete();
    };
    // Every way out (open, refusal, error, close, deadline, unsubscribe) detaches these at once,
    // so they are plain `on` listeners. The 'error' one stays (see above).
    const detachConnectListeners = (): void => {
      settled = true;
      socket.off('open', onOpen);
      socket.off('close', onConnectClose);
      socket.off('unexpected-response', onRefused);
    };
    // An HTTP refusal (e.g. 401 from an executor started with --ws-auth) is reported with the
    // short text the executor answered, which names the cause.
    const onRefused = (_request: unknown, response: RefusedUpgrade): void => {
      detachConnectListeners();
      deadline.unsubscribe();
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        if (body.length < MAX_REFUSAL_TEXT_CHARS) body += text;
      });
      const report = (): void => {
        const text = body.trim().slice(0, MAX_REFUSAL_TEXT_CHARS);
        subscriber.error(
          new ConnectError(
            `failed to connect to exec-server websocket \`${url}\`: HTTP ${response.statusCode}` +
              (text === '' ? '' : `: ${text}`),
          ),
        );
        socket.terminate();
      };
      response.once('end', report);
      response.once('error', report);
    };
    socket.on('open', onOpen);
    socket.on('error', onConnectError);
    socket.on('close', onConnectClose);
    socket.on('unexpected-response', onRefused);

    // Scheduled directly (not `timer(...).subscribe`): one action instead of an observable chain.
    const deadline = scheduler.schedule(() => {
      subscriber.error(
        new TimeoutError(
          `timed out connecting to exec-server websocket \`${url}\` after ${formatDuration(timeoutMs)}`,
        ),
      );
    }, timeoutMs);

    return () => {
      deadline.unsubscribe();
      if (opened) return; // the Transport owns the socket now
      detachConnectListeners();
      socket.terminate();
    };
  });
}

/**
 * Wraps an already-open WebSocket (a `ws` socket, accepted server-side or opened elsewhere, or
 * one from the platform seam) as a Transport. Subscribe to `incoming$` synchronously: messages
 * are not buffered.
 */
export function fromWebSocket(
  webSocket: PlatformWebSocket | import('ws').WebSocket,
  options: WebSocketTransportOptions = {},
): Transport {
  // A `ws` socket has every member of the seam's interface (its listener overloads are wider).
  const socket = webSocket as PlatformWebSocket;
  const incoming = new Subject<string | Uint8Array>();
  let closedByUs = false;
  let finished = false;
  let lastError: Error | undefined;

  const finish = (error?: Error): void => {
    if (finished) return;
    finished = true;
    keepalive?.unsubscribe();
    if (error) incoming.error(error);
    else incoming.complete();
  };

  socket.on('message', (data: WebSocketData, isBinary: boolean) => {
    if (finished) return;
    const message = webSocketMessage(data, isBinary);
    if (message !== undefined) {
      incoming.next(message);
      return;
    }
    finish(
      new ProtocolError('exec-server sent a binary WebSocket message that is not valid UTF-8'),
    );
    closedByUs = true;
    socket.close(1007, 'invalid UTF-8');
  });
  socket.on('error', (error: Error) => {
    lastError = error;
  });
  // One callback for every send: a failed write is reported by the 'close' that follows, so
  // no send needs a closure of its own.
  const onSent = (error?: Error): void => {
    if (error) lastError = error;
  };
  socket.on('close', (code: number, reason: Uint8Array) => {
    if (closedByUs || code === 1000 || code === 1001) {
      finish();
      return;
    }
    const detail =
      lastError?.message ??
      `connection closed with code ${code}${reason.length > 0 ? ` (${platform.utf8Decode(reason)})` : ''}`;
    finish(
      new DisconnectedError(`${DisconnectReason.transportDisconnected}: ${detail}`, {
        cause: lastError,
      }),
    );
  });

  const keepalive =
    options.keepaliveIntervalMs === undefined
      ? undefined
      : interval(options.keepaliveIntervalMs, options.scheduler ?? asyncScheduler).subscribe(() => {
          if (socket.readyState === WEBSOCKET_OPEN) socket.ping();
        });

  if (socket.readyState === WEBSOCKET_CLOSING || socket.readyState === WEBSOCKET_CLOSED) {
    finish(new DisconnectedError(DisconnectReason.transportDisconnected));
  }

  return {
    incoming$: incoming.pipe(
      map((message) => (typeof message === 'string' ? message : platform.utf8Decode(message))),
    ),
    incomingUtf8$: incoming.asObservable(),
    send(message: string): void {
      if (finished || socket.readyState !== WEBSOCKET_OPEN) return;
      // At most 3 UTF-8 bytes per UTF-16 unit: most messages are one frame without counting.
      if (message.length * 3 <= MAX_OUTBOUND_FRAME_BYTES) {
        socket.send(message, undefined, onSent);
        return;
      }
      sendFragmented(socket, platform.utf8Encode(message), onSent);
    },
    close(): void {
      if (closedByUs) return;
      closedByUs = true;
      finish();
      if (socket.readyState === WEBSOCKET_CONNECTING) {
        socket.terminate(); // its 'error' is absorbed by the listener above
      } else if (socket.readyState === WEBSOCKET_OPEN) {
        socket.close(1000);
      }
    },
    setPaused(paused: boolean): void {
      if (paused) socket.pause();
      else socket.resume();
    },
  };
}

/**
 * Sends one Text message as frames of at most MAX_OUTBOUND_FRAME_BYTES (a frame boundary may
 * fall inside a character: only the whole message must be UTF-8), or throws
 * `MessageTooLargeError` without sending anything.
 */
function sendFragmented(
  socket: PlatformWebSocket,
  bytes: Uint8Array,
  onSent: (error?: Error) => void,
): void {
  if (bytes.length > MAX_OUTBOUND_MESSAGE_BYTES)
    throw new MessageTooLargeError(bytes.length, MAX_OUTBOUND_MESSAGE_BYTES);
  for (let offset = 0; offset < bytes.length; offset += MAX_OUTBOUND_FRAME_BYTES) {
    const end = Math.min(offset + MAX_OUTBOUND_FRAME_BYTES, bytes.length);
    const fin = end === bytes.length;
    socket.send(bytes.subarray(offset, end), { binary: false, fin }, fin ? onSent : undefined);
  }
}
