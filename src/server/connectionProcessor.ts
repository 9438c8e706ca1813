/**
 * Serves one connection (spec §3): classifies inbound JSON texts, answers malformed input with
 * an `id: -1` error and keeps going, gates everything behind `initialize` + `initialized`,
 * dispatches requests, and closes the connection on an unknown notification or an unexpected
 * client response (as the 0.169.0 binary does). When the transport ends the session detaches.
 *
 * Ordering: messages are taken strictly in arrival order. Until `initialized` each request is
 * finished before the next message is looked at; afterwards requests run concurrently, so a
 * long `process/read` or `http/request` never delays `process/terminate` (spec §3.3).
 */
import type { Subscription } from 'rxjs';
import type { RequestId } from '../protocol/jsonrpc.js';
import { ErrorCode } from '../protocol/errors.js';
import type { Transport } from '../transport/transport.js';
import { configLocations } from './environmentConfig.js';
import { environmentInfo } from './environmentInfo.js';
import { FileHandleTable } from './fileHandles.js';
import { HttpRequests } from './httpRequests.js';
import type { InboundMessage } from './inboundMessage.js';
import { parseInboundText } from './fastpath/processWriteText.js';
import { parseInboundUtf8 } from './fastpath/processWriteFrame.js';
import { notificationText, ProcessOutputParams } from './fastpath/notificationText.js';
import { decoderOf, handlerOf, type HandlerContext } from './methods.js';
import { InitializeParams } from './params.js';
import { errorMessage } from '../protocol/errorMessage.js';
import { RpcFailure } from './rpcFailure.js';
import { PreformattedJson } from './preformattedJson.js';
import { resultReplyText } from './fastpath/resultReply.js';
import { acceptsSplitText } from './splitText.js';
import { reportsBackpressure } from './backpressure.js';
import { reportsUndecodable } from './undecodableMessage.js';
import type { Session, SessionOwner, SessionRegistry } from './sessionRegistry.js';
import { MissingWatches } from './watchMissing.js';

export interface ConnectionOptions {
  readonly registry: SessionRegistry;
  /**
   * Start of the malformed-input message, e.g. `failed to parse websocket JSON-RPC message
   * from exec-server websocket 127.0.0.1:5123` or `failed to parse JSON-RPC message from
   * exec-server stdio`.
   */
  readonly parseErrorPrefix: string;
  /** `environmentConfig/read`'s Codex home; default `$CODEX_HOME`, else `~/.codex`. */
  readonly codexHome?: string;
}

/** An inbound message with no text form, by the JSON error detail it gets (undecodableMessage.ts). */
class UndecodableMessage {
  constructor(readonly detail: string) {}
}

/** One inbound message: a text, valid UTF-8 bytes (`Transport.incomingUtf8$`), or undecodable. */
type InboundItem = string | Uint8Array | UndecodableMessage;

const decodeInitializeParams = decoderOf('initialize', InitializeParams);

/** Requests one connection may have awaiting an answer; one more is refused (-32600). */
export const MAX_PENDING_REQUESTS = 1024;
export const TOO_MANY_PENDING_REQUESTS = `at most ${MAX_PENDING_REQUESTS} requests may await an answer per connection; wait for some to complete`;

/**
 * Where the connection is in its handshake (spec §3.5), with every transition in this file:
 * `initialize` (once, may be retried after a failed resume) → `awaitingInitialized`;
 * `initialized` → `ready` (requests run concurrently); the transport's end → `closed`.
 */
type ConnectionPhase =
  | { readonly kind: 'awaitingInitialize' }
  | { readonly kind: 'awaitingInitialized'; readonly session: Session }
  | { readonly kind: 'ready'; readonly session: Session }
  | { readonly kind: 'closed'; readonly session: Session | undefined };

/** One connection being served (see the top of this file); `done` resolves when it has ended. */
export class ConnectionProcessor implements SessionOwner {
  private phase: ConnectionPhase = { kind: 'awaitingInitialize' };
  /** Requests read and not yet answered (at most MAX_PENDING_REQUESTS). */
  private pendingRequests = 0;
  /** The session whose process output is paused until the transport drains. */
  private outputPausedOn: Session | undefined;
  /** Tail of the inbound work still awaited (pre-handshake requests); undefined when idle. */
  private queue: Promise<void> | undefined;
  private readonly subscription: Subscription;
  private context: HandlerContext | undefined;
  private readonly fileHandles = new FileHandleTable();
  private readonly http: HttpRequests;
  private readonly missingWatches = new MissingWatches((method, params) =>
    this.sendNotification(method, params),
  );
  private resolveDone!: () => void;
  /** Resolves once the connection has ended and its session is detached. */
  readonly done: Promise<void> = new Promise((resolve) => (this.resolveDone = resolve));

  constructor(
    private readonly transport: Transport,
    private readonly options: ConnectionOptions,
  ) {
    this.http = new HttpRequests((method, params) => this.sendNotification(method, params));
    // A large message may come as its UTF-8 bytes (a process/write is read from them).
    this.subscription = (transport.incomingUtf8$ ?? transport.incoming$).subscribe({
      next: (text) => this.take(text),
      error: () => void this.finish(),
      complete: () => void this.finish(),
    });
    if (reportsUndecodable(transport))
      transport.onUndecodable((detail) => this.take(new UndecodableMessage(detail)));
  }

  /** Ends the connection: closes the transport and detaches the session. */
  close(): void {
    void this.finish();
  }

  private get closed(): boolean {
    return this.phase.kind === 'closed';
  }

  /** The session this connection initialized or resumed, if any. */
  private get session(): Session | undefined {
    return this.phase.kind === 'awaitingInitialize' ? undefined : this.phase.session;
  }

  /** Sends a notification to this connection's peer; dropped once the connection is closed. */
  sendNotification(method: string, params: unknown): void {
    if (this.closed) return;
    if (!(params instanceof ProcessOutputParams)) {
      this.transport.send(notificationText(method, params));
      return;
    }
    if (acceptsSplitText(this.transport)) {
      this.transport.sendSplit(params.splitNotificationText(method));
    } else {
      this.transport.send(params.notificationText(method));
    }
    this.applyBackpressure();
  }

  /** Stops reading process output while the transport is backed up; see backpressure.ts. */
  private applyBackpressure(): void {
    const { transport, session } = this;
    if (this.outputPausedOn || !session || !reportsBackpressure(transport) || !transport.backedUp)
      return;
    this.outputPausedOn = session;
    session.processes.setOutputPaused(true);
    transport.onceDrained(() => this.resumeOutput());
  }

  private resumeOutput(): void {
    this.outputPausedOn?.processes.setOutputPaused(false);
    this.outputPausedOn = undefined;
  }

  private write(message: object): void {
    if (!this.closed) this.transport.send(JSON.stringify(message));
  }

  private writeResult(id: RequestId, result: unknown): void {
    if (this.closed) return;
    this.transport.send(resultReplyText(id, result));
  }

  private replyError(id: RequestId, failure: RpcFailure): void {
    this.write({ error: { code: failure.code, message: failure.message }, id });
  }

  /**
   * Takes one inbound text in arrival order. When nothing earlier is still awaited the text is
   * handled at once, in this turn (no promise hop), which is what keeps a synchronous
   * handler's reply latency low; otherwise it waits behind the pending work.
   */
  private take(text: InboundItem): void {
    if (this.queue) {
      const next = this.queue.then(() => this.handleText(text));
      this.track(next);
      return;
    }
    let pending: Promise<void> | undefined;
    try {
      pending = this.handleText(text);
    } catch {
      void this.finish();
      return;
    }
    if (pending) this.track(pending);
  }

  private track(work: Promise<void>): void {
    const tail: Promise<void> = work
      .catch(() => this.finish())
      .then(() => {
        if (this.queue === tail) this.queue = undefined;
      });
    this.queue = tail;
  }

  /** Handles one text; returns a promise only when later texts must wait for it. */
  private handleText(text: InboundItem): Promise<void> | undefined {
    if (this.closed) return;
    // Step 1 of spec §3.2: a session taken over by another connection ends this one.
    if (this.session && this.session.owner !== this) return void this.finish();
    const message: InboundMessage =
      typeof text === 'string'
        ? parseInboundText(text)
        : text instanceof UndecodableMessage
          ? { kind: 'malformed', detail: text.detail }
          : parseInboundUtf8(text);
    switch (message.kind) {
      case 'request': {
        const handling = this.handleRequest(message.id, message.method, message.params);
        // Before the handshake completes, requests are strictly sequential.
        return this.phase.kind === 'ready' ? undefined : handling;
      }
      case 'notification':
        const phase = this.phase;
        if (
          message.method === 'initialized' &&
          (phase.kind === 'awaitingInitialized' || phase.kind === 'ready')
        ) {
          const session = phase.session;
          if (session.owner === this) {
            this.phase = { kind: 'ready', session };
            return;
          }
        }
        return void this.finish();
      case 'malformed':
        this.replyError(
          -1,
          RpcFailure.invalidRequest(`${this.options.parseErrorPrefix}: ${message.detail}`),
        );
        return;
      default:
        // This executor never sends requests to the client, so no response is expected.
        return void this.finish();
    }
  }

  /**
   * Runs one request. A handler that answers synchronously is replied to in this same turn;
   * the returned promise (only for asynchronous handlers) settles once the reply is sent.
   */
  private handleRequest(id: RequestId, method: string, params: unknown): Promise<void> | undefined {
    // Bounds the work one peer keeps in flight (executorLimits.spec.ts).
    if (this.pendingRequests >= MAX_PENDING_REQUESTS) {
      this.replyError(id, RpcFailure.invalidRequest(TOO_MANY_PENDING_REQUESTS));
      return;
    }
    let result: unknown;
    try {
      result = method === 'initialize' ? this.initialize(params) : this.dispatch(method, params);
    } catch (error) {
      this.replyFailure(id, error);
      return;
    }
    if (result instanceof PreformattedJson || !isThenable(result)) {
      this.writeResult(id, result);
      return;
    }
    this.pendingRequests += 1;
    return Promise.resolve(result)
      .then(
        (value) => this.writeResult(id, value),
        (error: unknown) => this.replyFailure(id, error),
      )
      .finally(() => (this.pendingRequests -= 1));
  }

  private replyFailure(id: RequestId, error: unknown): void {
    const failure = error instanceof RpcFailure ? error : RpcFailure.internal(errorMessage(error));
    this.replyError(id, failure);
  }

  private initialize(rawParams: unknown): { sessionId: string; environmentInfo: unknown } {
    const params = decodeInitializeParams(rawParams);
    if (this.phase.kind !== 'awaitingInitialize')
      throw RpcFailure.invalidRequest('initialize may only be sent once per connection');
    const { registry } = this.options;
    // A failed resume throws here and leaves the connection free to try initialize again.
    const session = params.resumeSessionId
      ? registry.resume(params.resumeSessionId, this)
      : registry.create(this);
    this.phase = { kind: 'awaitingInitialized', session };
    return { sessionId: session.id, environmentInfo: environmentInfo() };
  }

  /** Runs the handler; its result is a value or a promise, as the handler returns it. */
  private dispatch(method: string, rawParams: unknown): unknown {
    const spec = handlerOf(method);
    if (!spec) {
      throw new RpcFailure(
        ErrorCode.methodNotFound,
        `exec-server stub does not implement \`${method}\` yet`,
      );
    }
    const params = spec.decode(rawParams);
    const phase = this.phase;
    if (phase.kind === 'awaitingInitialize' || phase.kind === 'closed') {
      throw RpcFailure.invalidRequest(
        `client must call initialize before using ${spec.family} methods`,
      );
    }
    if (phase.session.owner !== this)
      throw RpcFailure.invalidRequest('session has been resumed by another connection');
    if (phase.kind !== 'ready') {
      throw RpcFailure.invalidRequest(
        `client must send initialized before using ${spec.family} methods`,
      );
    }
    return spec.run(this.handlerContext(phase.session), params);
  }

  /** What handlers see of `session` and this connection; made once per session. */
  private handlerContext(session: Session): HandlerContext {
    if (this.context?.processes !== session.processes) {
      this.context = {
        processes: session.processes,
        fileHandles: this.fileHandles,
        http: this.http,
        missingWatches: this.missingWatches,
        configLocations: () => configLocations(this.options.codexHome),
        stillAttached: () => session.owner === this,
      };
    }
    return this.context;
  }

  private async finish(): Promise<void> {
    if (this.phase.kind === 'closed') return;
    const session = this.session;
    this.phase = { kind: 'closed', session };
    this.subscription?.unsubscribe();
    this.transport.close();
    this.http.close();
    this.missingWatches.close();
    this.resumeOutput();
    if (session) this.options.registry.detach(session, this);
    await this.fileHandles.closeAll();
    this.resolveDone();
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
