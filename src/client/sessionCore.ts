/**
 * The state behind one logical exec-server session (spec/protocol.md §11): the current
 * transport, the connection state machine, guarded calls, notification routing, the process
 * registry, HTTP body routes, resume (§14.3) and retirement (§16).
 *
 * Not exported from the package: `ExecServerClient` is the public face. Everything here is
 * synchronous bookkeeping around RpcConnection; time only enters through the scheduler.
 */
import {
  BehaviorSubject,
  EMPTY,
  Observable,
  Subject,
  type Subscriber,
  catchError,
  concat,
  defer,
  filter,
  finalize,
  ignoreElements,
  map,
  of,
  switchMap,
  take,
  throwError,
  toArray,
  type SchedulerLike,
} from 'rxjs';
import type { z } from 'zod';
import { decodeValidatedBase64 } from './validatedBase64.js';
import {
  DisconnectedError,
  DisconnectReason,
  ErrorCode,
  ExecServerError,
  JsonError,
  ProcessFailedError,
  ProtocolError,
  ServerError,
  TimeoutError,
  isTransportClosed,
} from '../protocol/errors.js';
import { EnvironmentInfo } from '../protocol/environment.js';
import { fastCheckFor } from '../protocol/fastChecks.js';
import { HttpRequestBodyDeltaNotification } from '../protocol/http.js';
import { InitializeResult } from '../protocol/initialize.js';
import type { JsonRpcNotification } from '../protocol/jsonrpc.js';
import {
  NetworkPolicyRequestParams,
  type NetworkPolicyDecision,
  type NetworkPolicyRequestResult,
} from '../protocol/network.js';
import {
  ProcessClosedNotification,
  ProcessExitedNotification,
  ProcessOutputNotification,
  ProcessReadResult,
  ProcessTerminateResult,
} from '../protocol/process.js';
import { RpcConnection } from '../rpc/rpcConnection.js';
import { utf8ByteLength } from '../platform/index.js';
import { deadlineScheduler } from '../transport/deadlineScheduler.js';
import { formatDuration } from '../transport/formatDuration.js';
import type { Transport } from '../transport/transport.js';
import { HttpBodyStreams, checkDeltaSize } from './httpBodyStreams.js';
import type { ProcessEvent } from './processEvents.js';
import { ProcessEventLog, type ProcessReadSnapshot } from './processEventLog.js';

/**
 * - `connected`: a live transport carries calls.
 * - `recovering`: the transport was lost; new calls wait until `resume()` succeeds (or the
 *   session fails). Only entered when the client was connected with `recovery: true`.
 * - `retired`: replaced by another executor session; everything fails with
 *   `exec-server executor was replaced`. Terminal.
 * - `failed`: recovery gave up, the transport was lost without recovery, or the client was
 *   closed. Terminal.
 */
export type SessionState = 'connected' | 'recovering' | 'retired' | 'failed';

/** Decides one `network/policyRequest` from the executor (spec §9.4). */
export type NetworkPolicyHandler = (
  request: NetworkPolicyRequestParams,
) => Observable<NetworkPolicyDecision>;

export interface SessionCoreOptions {
  readonly clientName: string;
  readonly initializeTimeoutMs: number;
  readonly scheduler: SchedulerLike | undefined;
  readonly recovery: boolean;
  readonly handleNetworkPolicyRequest: NetworkPolicyHandler | undefined;
}

/** One process the session routes notifications to. */
export interface ProcessRecord {
  readonly processId: string;
  readonly log: ProcessEventLog;
  /** False while `process/start` is in flight; only recoverable processes are re-read on resume. */
  recoverable: boolean;
}

const NETWORK_POLICY_METHOD = 'network/policyRequest';
const NOT_ALLOWED: NetworkPolicyRequestResult = {
  decision: { type: 'deny', reason: 'not_allowed' },
};
const MAX_POLICY_HOST_BYTES = 253;
const MAX_POLICY_PROCESS_ID_BYTES = 256;
const MAX_POLICY_REASON_BYTES = 1024;

/**
 * What the handshake needs at once: the session id. The `environmentInfo` the executor sends
 * along stays raw until first asked for (`decodedEnvironmentInfo`): validating it is most of
 * the client's cost per connect, and many sessions never look at it.
 */
export interface HandshakeResult {
  readonly sessionId: string;
  readonly environmentInfo: unknown;
}

export class SessionCore {
  sessionId = '';
  /** The `environmentInfo` of the `initialize` result, not yet validated (undefined: omitted). */
  initialEnvironmentInfo: unknown;
  private environmentInfo: EnvironmentInfo | undefined;
  readonly state = new BehaviorSubject<SessionState>('connected');
  readonly disconnects = new Subject<DisconnectedError>();
  readonly processes = new Map<string, ProcessRecord>();
  readonly httpStreams = new HttpBodyStreams();
  nextHttpRequestId = 1;

  private rpc: RpcConnection | undefined;
  private terminal: DisconnectedError | undefined;
  /**
   * The subscriber of each guarded call still pending, failed once with the terminal error.
   * A set rather than a Subject: adding and removing one per call is cheaper than a subscription.
   */
  private readonly pendingCallAborts = new Set<Subscriber<unknown>>();

  constructor(readonly options: SessionCoreOptions) {}

  /** The error every call gets once the session is retired or failed. */
  get terminalError(): DisconnectedError | undefined {
    return this.terminal;
  }

  // ---------------------------------------------------------------------------------------
  // Transports

  /** Wraps a transport in an RpcConnection whose notifications this session routes. */
  openRpc(transport: Transport): RpcConnection {
    return new RpcConnection(transport, {
      handleRequest: (method, params) => this.answerServerRequest(method, params),
      onNotification: (notification, rpc) => this.dispatch(rpc, notification),
      onClose: (reason, rpc) => this.onTransportLost(rpc, reason),
    });
  }

  /**
   * `initialize{clientName, resumeSessionId}` then the `initialized` notification, under the
   * initialize budget (spec §4.1).
   */
  handshake(rpc: RpcConnection, resumeSessionId: string | null): Observable<HandshakeResult> {
    const budget = this.options.initializeTimeoutMs;
    const scheduler = this.options.scheduler ?? deadlineScheduler;
    const request = rpc.request('initialize', {
      clientName: this.options.clientName,
      resumeSessionId,
    });
    // One observable with a scheduled deadline rather than `map`/`map`/`timeout`: the same
    // contract (only the first answer is timed), without three operator subscribers per connect.
    return new Observable<HandshakeResult>((subscriber) => {
      const deadline = scheduler.schedule(() => {
        inner.unsubscribe();
        subscriber.error(
          new TimeoutError(
            `timed out waiting for exec-server initialize handshake after ${formatDuration(budget)}`,
          ),
        );
      }, budget);
      const inner = request.subscribe({
        next: (raw) => {
          deadline.unsubscribe();
          let result: HandshakeResult;
          try {
            result = decodeHandshakeResult(raw);
            rpc.notify('initialized', {});
          } catch (error) {
            subscriber.error(error);
            return;
          }
          subscriber.next(result);
        },
        error: (error: unknown) => {
          deadline.unsubscribe();
          subscriber.error(error);
        },
        complete: () => {
          deadline.unsubscribe();
          subscriber.complete();
        },
      });
      return () => {
        deadline.unsubscribe();
        inner.unsubscribe();
      };
    });
  }

  /**
   * The session's environment info: cached once known, else decoded from the `initialize`
   * result (JsonError if it does not match the protocol), else undefined (ask the executor).
   */
  decodedEnvironmentInfo(): EnvironmentInfo | undefined {
    if (this.environmentInfo === undefined && this.initialEnvironmentInfo !== undefined) {
      const parsed = EnvironmentInfo.safeParse(this.initialEnvironmentInfo);
      if (!parsed.success) {
        throw new JsonError(
          `\`initialize\` result did not match the protocol: environmentInfo: ${parsed.error.message}`,
        );
      }
      this.environmentInfo = parsed.data;
    }
    return this.environmentInfo;
  }

  /** Keeps the first environment info learned (from `environment/info`); returns the cached one. */
  cacheEnvironmentInfo(info: EnvironmentInfo): EnvironmentInfo {
    this.environmentInfo ??= info;
    return this.environmentInfo;
  }

  /** Makes `rpc` the session's live transport. */
  install(rpc: RpcConnection): void {
    if (this.terminal) throw this.terminal;
    if (rpc.isClosed) throw new DisconnectedError(DisconnectReason.transportDisconnected);
    this.rpc = rpc;
    this.state.next('connected');
  }

  /**
   * Resumes the session on a new transport (spec §14.3): initialize with the saved session id
   * (the same id must come back), send `initialized`, catch up every recoverable process
   * with `process/read`, then install the transport so waiting calls continue on it.
   */
  resume(transport: Transport): Observable<void> {
    return this.guard(
      defer(() => {
        const state = this.state.value;
        if (state !== 'recovering') {
          return throwError(
            () =>
              new ProtocolError(
                `cannot resume a session that is ${state}; resume only applies while recovering`,
              ),
          );
        }
        const rpc = this.openRpc(transport);
        let installed = false;
        return this.handshake(rpc, this.sessionId).pipe(
          switchMap((result) => {
            if (result.sessionId !== this.sessionId) {
              throw new ProtocolError(
                `exec-server initialized an unexpected session ${result.sessionId}`,
              );
            }
            return this.recoverProcesses(rpc);
          }),
          map(() => {
            if (this.state.value !== 'recovering') {
              throw new ProtocolError('session stopped recovering while it was being resumed');
            }
            this.install(rpc);
            installed = true;
          }),
          finalize(() => {
            if (!installed) rpc.close();
          }),
        );
      }),
    );
  }

  /** Retires (`retired: true`) or fails the session for good (spec §16 ordering). */
  terminate(kind: 'retired' | 'failed', error: DisconnectedError): void {
    if (this.terminal) return;
    // 1. Mark: from here on every result observed through this session is rejected.
    this.terminal = error;
    const rpc = this.rpc;
    this.rpc = undefined;
    this.state.next(kind);
    // 2. Pending calls (including process starts and calls waiting for recovery) fail now,
    //    before any stream cleanup.
    const aborts = [...this.pendingCallAborts];
    this.pendingCallAborts.clear();
    for (const abort of aborts) abort.error(error);
    rpc?.close(error);
    // 3. Then process handles and HTTP body streams.
    const records = [...this.processes.values()];
    this.processes.clear();
    for (const record of records) record.log.fail(error);
    this.httpStreams.failAll(error);
    this.disconnects.complete();
  }

  // ---------------------------------------------------------------------------------------
  // Calls

  /**
   * Guards an observable with the session's terminal state: it errors with the terminal error
   * if the session is (or becomes) retired or failed, including a result that already
   * arrived; transport-closed errors become `exec-server transport disconnected`.
   */
  guard<T>(source: Observable<T>): Observable<T> {
    return this.guardWith(source, true);
  }

  /**
   * Like `guard`, for event streams (process events, HTTP bodies): they are not aborted with
   * the pending calls but fail afterwards, when the session fails its process handles and
   * body streams (spec §16 step 4).
   */
  guardStream<T>(source: Observable<T>): Observable<T> {
    return this.guardWith(source, false);
  }

  private guardWith<T>(source: Observable<T>, abortWithCalls: boolean): Observable<T> {
    return new Observable<T>((subscriber) => {
      if (this.terminal) {
        subscriber.error(this.terminal);
        return undefined;
      }
      if (abortWithCalls) this.pendingCallAborts.add(subscriber);
      const inner = source.subscribe({
        next: (value) => {
          if (this.terminal) subscriber.error(this.terminal);
          else subscriber.next(value);
        },
        error: (error: unknown) => subscriber.error(this.terminal ?? mapCallError(error)),
        complete: () => subscriber.complete(),
      });
      return () => {
        if (abortWithCalls) this.pendingCallAborts.delete(subscriber);
        inner.unsubscribe();
      };
    });
  }

  /** The live transport; waits while recovering; errors once the session is terminal. */
  awaitRpc(): Observable<RpcConnection> {
    return defer(() => {
      this.noticeDeadRpc();
      if (this.terminal) return throwError(() => this.terminal);
      // Connected (the usual case): no need to watch the state.
      if (this.state.value !== 'recovering' && this.rpc !== undefined) return of(this.rpc);
      return this.state.pipe(
        filter((state) => state !== 'recovering'),
        take(1),
        map(() => {
          if (this.terminal) throw this.terminal;
          if (this.rpc === undefined)
            throw new DisconnectedError(DisconnectReason.transportDisconnected);
          return this.rpc;
        }),
      );
    });
  }

  /** The live transport right now, or `exec-server environment is recovering` (fail-fast). */
  liveRpcNow(): RpcConnection {
    this.noticeDeadRpc();
    if (this.terminal) throw this.terminal;
    if (this.rpc === undefined) throw new DisconnectedError(DisconnectReason.recovering);
    return this.rpc;
  }

  /** A call that waits for recovery, with its result decoded by `schema`. */
  call<S extends z.ZodType>(method: string, params: unknown, schema: S): Observable<z.output<S>> {
    return this.callWith(method, () => params, schema);
  }

  /**
   * `call` with params built on subscribe and executor errors mapped by `mapError` (before the
   * session's own error mapping). One observable around the request instead of an operator
   * chain: this is every filesystem call's path, and the layers were most of its client cost.
   */
  callWith<S extends z.ZodType>(
    method: string,
    buildParams: () => unknown,
    schema: S,
    mapError: (error: unknown) => unknown = identity,
  ): Observable<z.output<S>> {
    // The same contract as `guard(request.pipe(map(decode)))`, in one subscriber.
    return new Observable<z.output<S>>((subscriber) => {
      if (this.terminal) {
        subscriber.error(this.terminal);
        return undefined;
      }
      let params: unknown;
      try {
        params = buildParams();
        this.noticeDeadRpc();
      } catch (error) {
        subscriber.error(this.terminal ?? mapCallError(error));
        return undefined;
      }
      this.pendingCallAborts.add(subscriber);
      const observer = new CallObserver(this, method, schema, mapError, subscriber);
      const rpc = this.rpc;
      // Connected (the usual case): straight to the connection, without an inner observable.
      if (!this.terminal && this.state.value !== 'recovering' && rpc !== undefined) {
        const id = rpc.start(method, params, observer);
        return () => {
          this.pendingCallAborts.delete(subscriber);
          if (id !== undefined) rpc.forget(id, observer);
        };
      }
      const inner = this.awaitRpc()
        .pipe(switchMap((live) => live.request(method, params)))
        .subscribe(observer);
      return () => {
        this.pendingCallAborts.delete(subscriber);
        inner.unsubscribe();
      };
    });
  }

  /**
   * A call re-issued (with the same params, so the same `writeId`) on the resumed transport
   * when its transport is lost while the session is still alive. Only `process/read` and
   * `process/write` use this (spec §14.4).
   */
  callAcrossRecovery<S extends z.ZodType>(
    method: string,
    params: unknown,
    schema: S,
  ): Observable<z.output<S>> {
    const attempt = (): Observable<unknown> =>
      this.awaitRpc().pipe(
        switchMap((rpc) =>
          rpc.request(method, params).pipe(
            catchError((error: unknown) => {
              if (!isTransportClosed(error) || !rpc.isClosed || this.terminal) {
                return throwError(() => error);
              }
              // The connection fails its callers before announcing its end: record the
              // loss with its real reason now, then wait for the resumed transport.
              if (error instanceof ExecServerError) this.onTransportLost(rpc, error);
              return defer(attempt);
            }),
          ),
        ),
      );
    return this.guard(defer(attempt).pipe(map((raw) => decodeResult(method, schema, raw))));
  }

  /** Fires a `process/terminate` that survives recovery; failures are ignored (cleanup). */
  terminateInBackground(record: ProcessRecord): void {
    this.callAcrossRecovery(
      'process/terminate',
      { processId: record.processId },
      ProcessTerminateResult,
    )
      .pipe(
        catchError(() => EMPTY),
        finalize(() => this.unregister(record)),
      )
      .subscribe();
  }

  // ---------------------------------------------------------------------------------------
  // Processes

  /** Adds a route for a process about to be started. */
  register(processId: string): ProcessRecord {
    if (this.terminal) throw this.terminal;
    if (this.processes.has(processId)) {
      throw new ProtocolError(`session already registered for process ${processId}`);
    }
    const record: ProcessRecord = {
      processId,
      log: new ProcessEventLog(processId),
      recoverable: false,
    };
    this.processes.set(processId, record);
    return record;
  }

  /** Removes a route if it still belongs to `record`. */
  unregister(record: ProcessRecord): void {
    if (this.processes.get(record.processId) === record) this.processes.delete(record.processId);
  }

  // ---------------------------------------------------------------------------------------
  // Inbound traffic

  private dispatch(rpc: RpcConnection, notification: JsonRpcNotification): void {
    if (this.terminal) return;
    try {
      switch (notification.method) {
        case 'process/output': {
          const params = decodeNotification(notification, ProcessOutputNotification);
          this.route(params.processId, {
            type: 'output',
            seq: params.seq,
            stream: params.stream,
            chunk: decodeValidatedBase64(params.chunk),
          });
          return;
        }
        case 'process/exited': {
          const params = decodeNotification(notification, ProcessExitedNotification);
          this.route(params.processId, {
            type: 'exited',
            seq: params.seq,
            exitCode: params.exitCode,
            sandboxDenied: params.sandboxDenied ?? false,
          });
          return;
        }
        case 'process/closed': {
          const params = decodeNotification(notification, ProcessClosedNotification);
          this.route(params.processId, { type: 'closed', seq: params.seq });
          return;
        }
        case 'http/request/bodyDelta': {
          // Size first: an oversize delta must not be decoded at all.
          checkDeltaSize(
            (notification.params as { deltaBase64?: unknown } | null | undefined)?.deltaBase64,
          );
          this.httpStreams.dispatch(
            decodeNotification(notification, HttpRequestBodyDeltaNotification),
          );
          return;
        }
        default:
          return; // network/policyDecision audit records and unknown methods are ignored
      }
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.transportFault(rpc, `exec-server notification handling failed: ${detail}`);
    }
  }

  private route(processId: string, event: ProcessEvent): void {
    const record = this.processes.get(processId);
    if (record === undefined) return;
    record.log.accept(event);
    if (record.log.isFinished) this.unregister(record);
  }

  /** A fault on one transport: drop it and let recovery (or failure) take over. */
  private transportFault(rpc: RpcConnection, message: string): void {
    this.onTransportLost(rpc, new DisconnectedError(message));
    rpc.close();
  }

  private noticeDeadRpc(): void {
    if (this.rpc?.isClosed && this.state.value === 'connected') {
      this.onTransportLost(this.rpc, new DisconnectedError(DisconnectReason.transportDisconnected));
    }
  }

  private onTransportLost(rpc: RpcConnection, reason: ExecServerError): void {
    if (this.rpc !== rpc || this.state.value !== 'connected' || this.terminal) return;
    this.rpc = undefined;
    const error =
      reason instanceof DisconnectedError
        ? reason
        : new DisconnectedError(`${DisconnectReason.transportDisconnected}: ${reason.message}`, {
            cause: reason,
          });
    this.disconnects.next(error);
    if (!this.options.recovery) {
      this.terminate('failed', error);
      return;
    }
    // Body streams never survive a transport loss (spec §14.2 step 2).
    this.httpStreams.failAll(error);
    this.state.next('recovering');
  }

  private recoverProcesses(rpc: RpcConnection): Observable<unknown> {
    const records = [...this.processes.values()].filter(
      (record) => record.recoverable && !record.log.isFinished,
    );
    return concat(...records.map((record) => defer(() => this.recoverProcess(rpc, record)))).pipe(
      toArray(),
    );
  }

  private recoverProcess(rpc: RpcConnection, record: ProcessRecord): Observable<never> {
    const { processId, log } = record;
    return rpc
      .request('process/read', {
        processId,
        afterSeq: log.lastPublishedSeq,
        maxBytes: null,
        waitMs: 0,
      })
      .pipe(
        map((raw) => decodeResult('process/read', ProcessReadResult, raw)),
        switchMap((result) => {
          log.recover(toSnapshot(result));
          if (log.isFinished) this.unregister(record);
          return EMPTY;
        }),
        catchError((error: unknown) => {
          if (isTransportClosed(error)) return throwError(() => error);
          const detail = error instanceof Error ? error.message : String(error);
          const terminate = rpc.request('process/terminate', { processId }).pipe(
            catchError((failure: unknown) =>
              isTransportClosed(failure) ? throwError(() => failure) : EMPTY,
            ),
            ignoreElements(),
          );
          return concat(
            terminate,
            defer(() => {
              this.unregister(record);
              log.fail(
                new ProcessFailedError(
                  processId,
                  `failed to recover process ${processId}: ${detail}`,
                ),
              );
              return EMPTY;
            }),
          );
        }),
      );
  }

  /** Server→client requests: only `network/policyRequest` is implemented (spec §9.5). */
  private answerServerRequest(method: string, params: unknown): Observable<unknown> | undefined {
    if (method !== NETWORK_POLICY_METHOD) return undefined;
    const parsed = NetworkPolicyRequestParams.safeParse(params);
    if (!parsed.success) {
      return throwError(
        () => new ServerError(ErrorCode.invalidParams, 'invalid network policy request params'),
      );
    }
    const request = parsed.data;
    const decide = this.options.handleNetworkPolicyRequest;
    if (
      decide === undefined ||
      !this.processes.has(request.processId) ||
      !isValidPolicyRequest(request)
    ) {
      return of(NOT_ALLOWED);
    }
    return defer(() => decide(request)).pipe(
      take(1),
      map((decision): NetworkPolicyRequestResult => ({ decision: sanitizeDecision(decision) })),
      catchError(() => of(NOT_ALLOWED)),
    );
  }
}

function isValidPolicyRequest(request: NetworkPolicyRequestParams): boolean {
  const processIdBytes = utf8ByteLength(request.processId);
  const host = request.request.host;
  return (
    processIdBytes > 0 &&
    processIdBytes <= MAX_POLICY_PROCESS_ID_BYTES &&
    host.length > 0 &&
    utf8ByteLength(host) <= MAX_POLICY_HOST_BYTES &&
    !/[\s\p{Cc}]/u.test(host)
  );
}

function sanitizeDecision(decision: NetworkPolicyDecision): NetworkPolicyDecision {
  if (decision.type === 'allow') return decision;
  const reason = decision.reason;
  if (utf8ByteLength(reason) > MAX_POLICY_REASON_BYTES || /\p{Cc}/u.test(reason)) {
    return { type: decision.type, reason: 'not_allowed' };
  }
  return decision;
}

function toSnapshot(result: ProcessReadResult): ProcessReadSnapshot {
  return {
    chunks: result.chunks.map((chunk) => ({
      type: 'output' as const,
      seq: chunk.seq,
      stream: chunk.stream,
      chunk: decodeValidatedBase64(chunk.chunk),
    })),
    nextSeq: result.nextSeq,
    exited: result.exited,
    exitCode: result.exitCode,
    closed: result.closed,
    failure: result.failure,
    sandboxDenied: result.sandboxDenied,
  };
}

function identity<T>(value: T): T {
  return value;
}

/** Every transport-closed error becomes `exec-server transport disconnected` (spec §11.3). */
function mapCallError(error: unknown): unknown {
  if (
    isTransportClosed(error) &&
    !(error instanceof DisconnectedError && error.message === DisconnectReason.recovering)
  ) {
    return new DisconnectedError(DisconnectReason.transportDisconnected, { cause: error });
  }
  return error;
}

/** Decodes a result with its schema; a mismatch is a JsonError naming the method. */
/**
 * The inner observer of one `callWith`: a class, so a call allocates one object instead of a
 * closure per callback (closures are the client's per-call cost, more so under tsx's keepNames).
 */
class CallObserver<S extends z.ZodType> {
  constructor(
    private readonly core: SessionCore,
    private readonly method: string,
    private readonly schema: S,
    private readonly mapError: (error: unknown) => unknown,
    private readonly subscriber: Subscriber<z.output<S>>,
  ) {}

  next(raw: unknown): void {
    const terminal = this.core.terminalError;
    if (terminal) {
      this.subscriber.error(terminal);
      return;
    }
    let value: z.output<S>;
    try {
      value = decodeResult(this.method, this.schema, raw);
    } catch (error) {
      this.subscriber.error(error);
      return;
    }
    this.subscriber.next(value);
  }

  error(error: unknown): void {
    this.subscriber.error(this.core.terminalError ?? mapCallError(this.mapError(error)));
  }

  complete(): void {
    this.subscriber.complete();
  }
}

/**
 * The `initialize` result with only `sessionId` checked now (see HandshakeResult); anything
 * else that is off is reported by the full schema.
 */
function decodeHandshakeResult(raw: unknown): HandshakeResult {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const record = raw as Record<string, unknown>;
    if (typeof record.sessionId === 'string') {
      return { sessionId: record.sessionId, environmentInfo: record.environmentInfo };
    }
  }
  decodeResult('initialize', InitializeResult, raw); // throws JsonError with the schema's message
  throw new JsonError('`initialize` result did not match the protocol: no sessionId');
}

export function decodeResult<S extends z.ZodType>(
  method: string,
  schema: S,
  raw: unknown,
): z.output<S> {
  const checked = fastCheckFor(schema)?.(raw);
  if (checked !== undefined) return checked;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new JsonError(`\`${method}\` result did not match the protocol: ${parsed.error.message}`);
  }
  return parsed.data;
}

function decodeNotification<S extends z.ZodType>(
  notification: JsonRpcNotification,
  schema: S,
): z.output<S> {
  const checked = fastCheckFor(schema)?.(notification.params);
  if (checked !== undefined) return checked;
  const parsed = schema.safeParse(notification.params);
  if (!parsed.success) {
    throw new JsonError(
      `\`${notification.method}\` params did not match the protocol: ${parsed.error.message}`,
    );
  }
  return parsed.data;
}
