/**
 * One JSON-RPC connection over one Transport (spec/protocol.md §10, the upstream `RpcClient`):
 * integer request ids from 1, responses matched by id, ordered close, answers to
 * server→client requests (§9.5). Malformed input from the peer is fatal for the connection.
 */
import { Observable, ReplaySubject, Subject, type Subscription } from 'rxjs';
import {
  DisconnectedError,
  DisconnectReason,
  ErrorCode,
  ExecServerError,
  ProtocolError,
  ServerError,
} from '../protocol/errors.js';
import {
  classifyMessage,
  encodeMessage,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type RequestId,
} from '../protocol/jsonrpc.js';
import { errorMessage } from '../protocol/errorMessage.js';
import { platform } from '../platform/index.js';
import type { Transport } from '../transport/transport.js';
import {
  parseOutputNotification,
  parseOutputNotificationUtf8,
} from './fastpath/outputNotification.js';
import { plainResponse } from './fastpath/plainResponse.js';
import { requestText } from './fastpath/requestText.js';

/** `MAX_IN_FLIGHT_REGULAR_CALLS` (spec §18.1). */
const DEFAULT_MAX_PENDING_REQUESTS = 1024;

/** How much of an offending message a ProtocolError quotes. */
const EXCERPT_CHARS = 120;

export interface RpcConnectionOptions {
  /** Answers server→client requests. Return undefined ⇒ reply -32601 "exec-server client does not implement `<method>` yet". */
  handleRequest?: (method: string, params: unknown) => Observable<unknown> | undefined;
  /** Default 1024 (spec: "exec-server has reached its limit of 1024 pending requests"). */
  maxPendingRequests?: number;
  /**
   * Called with each inbound notification, in arrival order, before `notifications$` sees it
   * (the cheaper hook for the one owner of a connection). May run during the constructor.
   */
  onNotification?: (notification: JsonRpcNotification, connection: RpcConnection) => void;
  /** Called once with the reason when the connection ends, before `closed$` emits. May run during the constructor. */
  onClose?: (reason: ExecServerError, connection: RpcConnection) => void;
}

/** Receives the outcome of one request: `next(result)` then `complete()`, or `error(reason)`. */
export interface RpcResponseObserver {
  next(result: unknown): void;
  error(error: unknown): void;
  complete(): void;
}

export class RpcConnection {
  // Made on first use: a session owner listens through the option hooks instead.
  private notifications: Subject<JsonRpcNotification> | undefined;
  private closed: ReplaySubject<ExecServerError> | undefined;
  private readonly pending = new Map<number, RpcResponseObserver>();
  /** Server→client requests we are still answering, by id, with the handler's subscription. */
  private readonly inboundRequests = new Map<number, Subscription | undefined>();
  private readonly maxPendingRequests: number;
  private readonly handleRequest: RpcConnectionOptions['handleRequest'];
  private readonly onNotification: RpcConnectionOptions['onNotification'];
  private readonly onClose: RpcConnectionOptions['onClose'];
  private readonly incoming: Subscription;
  private nextRequestId = 1;
  private closeReason: ExecServerError | undefined;

  constructor(
    private readonly transport: Transport,
    options: RpcConnectionOptions = {},
  ) {
    this.maxPendingRequests = options.maxPendingRequests ?? DEFAULT_MAX_PENDING_REQUESTS;
    this.handleRequest = options.handleRequest;
    this.onNotification = options.onNotification;
    this.onClose = options.onClose;
    // Every inbound event runs synchronously in arrival order, so responses and notifications
    // that arrived before the end are delivered before pending requests fail.
    this.incoming = (transport.incomingUtf8$ ?? transport.incoming$).subscribe({
      next: (received) => this.receive(received),
      error: (error: unknown) => this.shutdown(asDisconnect(error)),
      complete: () => this.shutdown(new DisconnectedError(DisconnectReason.transportDisconnected)),
    });
    if (this.closeReason) this.incoming.unsubscribe();
  }

  /** Hot: every inbound notification in arrival order; completes when the connection closes. */
  get notifications$(): Observable<JsonRpcNotification> {
    if (this.notifications === undefined) {
      this.notifications = new Subject();
      if (this.closeReason) this.notifications.complete();
    }
    return this.notifications.asObservable();
  }

  /** Emits the reason once when the connection ends, then completes; replays to late subscribers. */
  get closed$(): Observable<ExecServerError> {
    if (this.closed === undefined) {
      this.closed = new ReplaySubject(1);
      if (this.closeReason) {
        this.closed.next(this.closeReason);
        this.closed.complete();
      }
    }
    return this.closed.asObservable();
  }

  get isClosed(): boolean {
    return this.closeReason !== undefined;
  }

  /**
   * Cold: sends on subscribe with the next id, emits the raw result once, completes.
   * Unsubscribing before the answer forgets the call (a late answer is ignored).
   */
  request(method: string, params: unknown): Observable<unknown> {
    return new Observable<unknown>((subscriber) => {
      const id = this.start(method, params, subscriber);
      return id === undefined ? undefined : () => this.forget(id, subscriber);
    });
  }

  /**
   * `request` without the Observable, for a caller that already owns a subscriber (the
   * client's direct call path, src/client/fastpath/directCall.ts): sends now and reports to `observer` (synchronously `error` when the connection
   * is closed or full). Returns the id to `forget` when the caller stops waiting.
   */
  start(method: string, params: unknown, observer: RpcResponseObserver): number | undefined {
    if (this.closeReason) {
      observer.error(pendingFailure(this.closeReason));
      return undefined;
    }
    if (this.pending.size >= this.maxPendingRequests) {
      observer.error(
        new ProtocolError(
          `exec-server has reached its limit of ${this.maxPendingRequests} pending requests`,
        ),
      );
      return undefined;
    }
    const id = this.nextRequestId++;
    this.pending.set(id, observer);
    try {
      // Same text as `encodeMessage` of the request, without building the tagged message.
      this.transport.send(requestText(id, method, params));
    } catch (error) {
      // Nothing was sent (e.g. MessageTooLargeError): only this call fails.
      this.pending.delete(id);
      observer.error(error);
      return undefined;
    }
    return id;
  }

  /** Stops waiting for request `id` of `observer` (a late answer is then ignored). */
  forget(id: number, observer: RpcResponseObserver): void {
    if (this.pending.get(id) === observer) this.pending.delete(id);
  }

  /** Sends a notification (no-op when closed). */
  notify(method: string, params: unknown): void {
    if (this.closeReason) return;
    // Same text as `encodeMessage` of the notification, without building the tagged message.
    this.transport.send(JSON.stringify({ method, params: params ?? null }));
  }

  /**
   * Closes the transport; pending requests fail with `reason`, by default
   * DisconnectedError('exec-server transport disconnected'). (An owner that already holds the
   * reason passes it, so no second Error, with its stack, is made.)
   */
  close(reason?: DisconnectedError): void {
    if (this.closeReason) return;
    this.shutdown(reason ?? new DisconnectedError(DisconnectReason.transportDisconnected));
  }

  /** Stops or restarts reading from the transport (Transport `setPaused`). */
  setPaused(paused: boolean): void {
    this.transport.setPaused?.(paused);
  }

  private send(message: JsonRpcMessage): void {
    this.transport.send(encodeMessage(message));
  }

  /** One inbound message: its text, or its validated UTF-8 (`Transport.incomingUtf8$`). */
  private receive(received: string | Uint8Array): void {
    if (this.closeReason) return;
    // A streaming process's output is read without JSON.parse (src/rpc/fastpath/outputNotification.ts).
    const output =
      typeof received === 'string'
        ? parseOutputNotification(received)
        : parseOutputNotificationUtf8(received);
    if (output !== undefined) {
      this.deliver(output);
      return;
    }
    const text = typeof received === 'string' ? received : platform.utf8Decode(received);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.shutdown(
        new ProtocolError(
          `exec-server sent malformed JSON (${errorMessage(error)}): ${excerpt(text)}`,
        ),
      );
      return;
    }
    // The most frequent message takes the fast path (src/rpc/fastpath/plainResponse.ts).
    const response = plainResponse(value);
    if (response !== undefined) {
      const caller = this.pending.get(response.id);
      if (caller === undefined) return; // nobody waits for it (spec §2.1)
      this.pending.delete(response.id);
      caller.next(response.result);
      caller.complete();
      return;
    }
    const message = classifyMessage(value);
    if (!message) {
      this.shutdown(
        new ProtocolError(
          `exec-server sent a message that is not a JSON-RPC request, notification, response or error: ${excerpt(text)}`,
        ),
      );
      return;
    }
    switch (message.kind) {
      case 'response':
        this.settle(message.id, (subscriber) => {
          subscriber.next(message.result);
          subscriber.complete();
        });
        return;
      case 'error':
        this.settle(message.id, (subscriber) =>
          subscriber.error(new ServerError(message.error.code, message.error.message)),
        );
        return;
      case 'notification': {
        const { kind: _kind, ...notification } = message;
        this.deliver(notification);
        return;
      }
      case 'request':
        this.answer(message.id, message.method, message.params);
        return;
    }
  }

  private deliver(notification: JsonRpcNotification): void {
    this.onNotification?.(notification, this);
    this.notifications?.next(notification);
  }

  /** Hands a response to its caller; a response nobody waits for is dropped (spec §2.1). */
  private settle(id: RequestId, deliver: (subscriber: RpcResponseObserver) => void): void {
    if (typeof id !== 'number') return;
    const subscriber = this.pending.get(id);
    if (!subscriber) return;
    this.pending.delete(id);
    deliver(subscriber);
  }

  /** Server→client request admission and answer (spec §9.5). */
  private answer(id: RequestId, method: string, params: unknown): void {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
      this.shutdown(new ProtocolError('exec-server sent an invalid request ID'));
      return;
    }
    if (this.inboundRequests.has(id)) {
      this.shutdown(new ProtocolError('exec-server reused an in-flight request ID'));
      return;
    }
    const handler = this.handleRequest?.(method, params);
    if (!handler) {
      this.send({
        kind: 'error',
        id,
        error: {
          code: ErrorCode.methodNotFound,
          message: `exec-server client does not implement \`${method}\` yet`,
        },
      });
      return;
    }
    this.inboundRequests.set(id, undefined);
    let answered = false;
    const reply = (message: JsonRpcMessage): void => {
      if (answered || this.closeReason) return;
      answered = true;
      this.inboundRequests.delete(id);
      this.send(message);
    };
    const subscription = handler.subscribe({
      next: (result) => reply({ kind: 'response', id, result: result ?? null }),
      error: (error: unknown) =>
        reply({
          kind: 'error',
          id,
          error:
            error instanceof ServerError
              ? { code: error.code, message: error.serverMessage }
              : {
                  code: ErrorCode.internalError,
                  message: errorMessage(error),
                },
        }),
      complete: () => reply({ kind: 'response', id, result: null }),
    });
    if (answered) subscription.unsubscribe();
    else if (this.inboundRequests.has(id)) this.inboundRequests.set(id, subscription);
    else subscription.unsubscribe();
  }

  /** Ordered close (spec §10): mark closed, fail pending calls, announce, then drop the transport. */
  private shutdown(reason: ExecServerError): void {
    if (this.closeReason) return;
    this.closeReason = reason;
    // `incoming` is unassigned when the transport ended during the constructor's subscribe.
    this.incoming?.unsubscribe();
    const answering = [...this.inboundRequests.values()];
    this.inboundRequests.clear();
    for (const subscription of answering) subscription?.unsubscribe(); // no answer after a drop (§9.5)
    const failure = pendingFailure(reason);
    const callers = [...this.pending.values()];
    this.pending.clear();
    for (const subscriber of callers) subscriber.error(failure);
    this.notifications?.complete();
    this.onClose?.(reason, this);
    this.closed?.next(reason);
    this.closed?.complete();
    this.transport.close();
  }
}

function pendingFailure(reason: ExecServerError): DisconnectedError {
  return reason instanceof DisconnectedError
    ? reason
    : new DisconnectedError(reason.message, { cause: reason });
}

function asDisconnect(error: unknown): ExecServerError {
  if (error instanceof ExecServerError) return error;
  return new DisconnectedError(
    `${DisconnectReason.transportDisconnected}: ${errorMessage(error)}`,
    {
      cause: error,
    },
  );
}

function excerpt(text: string): string {
  return text.length <= EXCERPT_CHARS
    ? text
    : `${text.slice(0, EXCERPT_CHARS)}… (${text.length} chars)`;
}
