/**
 * `ExecServerClient`: one logical exec-server session (spec/protocol.md §11) — processes,
 * filesystem, HTTP and environment metadata — possibly spanning several transports through
 * `resume()`. The lifecycle layer above decides when to reconnect, resume, retire or fail.
 */
import { Observable, defer, finalize, map, of, throwError, type SchedulerLike } from 'rxjs';
import {
  ConnectError,
  DisconnectedError,
  DisconnectReason,
  ErrorCode,
  ProtocolError,
  ServerError,
  TimeoutError,
  isTransportClosed,
} from '../protocol/errors.js';
import type { EnvironmentInfo } from '../protocol/environment.js';
import { METHODS, type ClientMethod, type ParamsOf, type ResultOf } from '../protocol/methods.js';
import type { NetworkPolicyDecisionNotification } from '../protocol/network.js';
import type { W3cTraceContext } from '../protocol/w3cTraceContext.js';
import type {
  CapabilitiesDiscoverV2Result,
  CapabilityRootsDiscoverV1Result,
} from '../protocol/capabilities.js';
import type { EnvironmentConfigReadResult } from '../protocol/environment.js';
import type { CallOptions } from './callRouter.js';
import * as calls from './sessionCalls.js';
import type { Transport } from '../transport/transport.js';
import { FileSystemClient } from './fileSystemClient.js';
import { HttpClient } from './httpClient.js';
import {
  ENVIRONMENT_INFO_TIMEOUT_MS,
  ENVIRONMENT_STATUS_TIMEOUT_MS,
  INITIALIZE_TIMEOUT_MS,
} from './limits.js';
import { NETWORK_POLICY_TIMEOUT_MS } from './networkPolicyPrompts.js';
import { ProcessHandle } from './processHandle.js';
import { buildStartParams, type StartProcessOptions } from './startProcessOptions.js';

export type { StartProcessOptions } from './startProcessOptions.js';
import {
  SessionCore,
  type NetworkPolicyHandler,
  type ProcessRecord,
  type SessionState,
} from './sessionCore.js';

export interface ExecServerClientOptions {
  /** Sent in `initialize`; upstream uses `codex-core` or `codex-environment`. */
  readonly clientName: string;
  /** Attach to an existing session instead of creating one (the same id must come back). Default null. */
  readonly resumeSessionId?: string | null;
  /** Budget for `initialize` + `initialized`, default 10 000 ms. */
  readonly initializeTimeoutMs?: number;
  /** Scheduler for every timeout (tests pass a TestScheduler). */
  readonly scheduler?: SchedulerLike;
  /**
   * When true, losing the transport moves the session to `recovering` (calls wait) until
   * `resume()` or `fail()`. When false (default), a transport loss fails the session.
   */
  readonly recovery?: boolean;
  /**
   * The default network policy: decides `network/policyRequest`s of processes nobody watches
   * through `ProcessHandle.networkPolicyRequests$`. Without it they are denied (`not_allowed`).
   */
  readonly handleNetworkPolicyRequest?: NetworkPolicyHandler;
  /**
   * Deadline of each network policy request when its process's `networkProxy` names no
   * `policyDecisionTimeoutMs`; at the deadline the answer is deny `not_allowed`. Default 30 000 ms.
   */
  readonly networkPolicyTimeoutMs?: number;
  /**
   * The W3C trace context of the caller's current span, asked for each request the session
   * sends, on every transport it runs on (resumed ones included): requests then carry
   * `trace` (src/transport/tracedTransport.ts has the rules). Undefined: no `trace`.
   */
  readonly traceContext?: () => W3cTraceContext | undefined;
}

export class ExecServerClient {
  // Built on first use: most sessions touch only some of them, and connect stays cheaper.
  private fsClient: FileSystemClient | undefined;
  private httpClient: HttpClient | undefined;

  private constructor(private readonly core: SessionCore) {}

  /** Filesystem of the executor host, with native paths. */
  get fs(): FileSystemClient {
    return (this.fsClient ??= new FileSystemClient(this.core, () => this.environmentInfo()));
  }

  /** HTTP requests sent from the executor host. */
  get http(): HttpClient {
    return (this.httpClient ??= new HttpClient(this.core));
  }

  /**
   * Opens a session on `transport`: `initialize{clientName, resumeSessionId}`, then the
   * `initialized` notification, within `initializeTimeoutMs` (TimeoutError "timed out waiting
   * for exec-server initialize handshake after 10s"). Cold; unsubscribing before it emits
   * closes the transport, and so does a failed handshake.
   */
  static connect(
    transport: Transport,
    options: ExecServerClientOptions,
  ): Observable<ExecServerClient> {
    return defer(() => {
      const core = new SessionCore({
        clientName: options.clientName,
        initializeTimeoutMs: options.initializeTimeoutMs ?? INITIALIZE_TIMEOUT_MS,
        scheduler: options.scheduler,
        recovery: options.recovery ?? false,
        handleNetworkPolicyRequest: options.handleNetworkPolicyRequest,
        networkPolicyTimeoutMs: options.networkPolicyTimeoutMs ?? NETWORK_POLICY_TIMEOUT_MS,
        traceContext: options.traceContext,
      });
      const resumeSessionId = options.resumeSessionId ?? null;
      const rpc = core.openRpc(transport);
      let installed = false;
      return core.handshake(rpc, resumeSessionId).pipe(
        map((result) => {
          if (resumeSessionId !== null && result.sessionId !== resumeSessionId) {
            throw new ProtocolError(
              `exec-server initialized an unexpected session ${result.sessionId}`,
            );
          }
          core.establish(rpc, result);
          installed = true;
          return new ExecServerClient(core);
        }),
        finalize(() => {
          if (!installed) rpc.close();
        }),
      );
    });
  }

  /** The executor's session id (stable across `resume()`). */
  get sessionId(): string {
    return this.core.sessionId;
  }

  /** Current connection state. */
  get state(): SessionState {
    return this.core.lifecycle.state;
  }

  /** The state now and on every change (`retired` and `failed` are final). */
  get state$(): Observable<SessionState> {
    return this.core.lifecycle.state$;
  }

  /** Why the session ended (`retired` or `failed`), or undefined while it is alive. */
  get failure(): DisconnectedError | undefined {
    return this.core.lifecycle.terminalError;
  }

  /**
   * Flow control for a consumer slower than the executor (output piped into a slow sink):
   * stops reading from the executor, on this transport and on any a resume opens, until
   * `resumeReading()`. The executor's writes then back up and it stops reading its processes'
   * output, so nothing piles up in our memory and nothing is lost. While paused, responses and
   * notifications of the whole session wait, so pause only as long as a sink is full. A
   * browser WebSocket cannot stop reading: there it has no effect. Guarded by
   * spec/client/readingPaused.spec.ts.
   */
  pauseReading(): void {
    this.core.lifecycle.setReadingPaused(true);
  }

  /** Reads from the executor again after `pauseReading()`. */
  resumeReading(): void {
    this.core.lifecycle.setReadingPaused(false);
  }

  /**
   * Emits each time the live transport is lost (EOF, error, protocol fault), with the
   * reason, just before the state becomes `recovering` (or `failed` without recovery).
   * Completes when the session ends.
   */
  get disconnected$(): Observable<DisconnectedError> {
    return this.core.disconnected$;
  }

  /**
   * `network/policyDecision` audit records the executor sends for this session's processes
   * (malformed ones and ones for unknown processes are ignored). Hot; completes when the
   * session ends. `ProcessHandle.networkPolicyDecisions$` has one process's records.
   */
  get networkPolicyDecisions$(): Observable<NetworkPolicyDecisionNotification> {
    return this.core.notifications.policyDecisions$;
  }

  /**
   * `environment/info`: cached for the session's lifetime (seeded from the `initialize`
   * result when the executor sends it); otherwise fetched with a 30 s budget.
   */
  environmentInfo(): Observable<EnvironmentInfo> {
    const core = this.core;
    return defer(() => {
      const terminal = core.lifecycle.terminalError;
      if (terminal) return throwError(() => terminal);
      const known = core.decodedEnvironmentInfo();
      if (known !== undefined) return of(known);
      return core.calls
        .call('environment/info', null, {
          timeoutMs: ENVIRONMENT_INFO_TIMEOUT_MS,
          replaceTransportOnTimeout: true,
        })
        .pipe(map((info) => core.cacheEnvironmentInfo(info)));
    });
  }

  /** `environment/info` asked again, never from the cache (30 s budget). */
  forceEnvironmentInfo(): Observable<EnvironmentInfo> {
    return calls.forceEnvironmentInfo(this.core);
  }

  /** `environmentConfig/read`: the executor's Codex config layers for `cwd`, reduced to key paths. */
  readEnvironmentConfig(
    options: calls.EnvironmentConfigReadOptions,
  ): Observable<EnvironmentConfigReadResult> {
    return calls.readEnvironmentConfig(this.core, options);
  }

  /**
   * `capabilityRoots/discoverV1`: plugin and skill manifests under each root, in request order.
   * Replayed once when the transport is lost in flight and the session recovers within 8 s.
   */
  discoverCapabilityRoots(
    roots: readonly calls.CapabilityRootRequest[],
  ): Observable<CapabilityRootsDiscoverV1Result> {
    return calls.discoverCapabilityRoots(this.core, () => this.environmentInfo(), roots);
  }

  /** `capabilities/discoverV2`: the plugins and skills the executor finds for `cwd`. */
  discoverCapabilities(cwd: string): Observable<CapabilitiesDiscoverV2Result> {
    return calls.discoverCapabilities(this.core, cwd);
  }

  /**
   * The escape hatch: any client request of the method table, typed by it, for a method this
   * client does not wrap (or to pass wire params as they are). Same rules as every call:
   * waits while recovering (see `CallOptions.recovery`), errors once the session ended.
   */
  call<M extends ClientMethod>(
    method: M,
    params: ParamsOf<M>,
    options: Pick<CallOptions, 'recovery' | 'timeoutMs'> = {},
  ): Observable<ResultOf<M>> {
    return this.core.calls.call(method, params, options);
  }

  /**
   * A handle onto a process of this session by id — one started by another client object
   * before a resume, or by this one. Its `read`, `write`, `signal` and `terminate` reach the
   * executor's process; its `events$` carry what arrives from now on (use `read()` for the
   * retained output). Returns the started handle's twin when this client already routes it.
   * Throws the session's error once it was retired or failed.
   */
  process(processId: string): ProcessHandle {
    const record = this.core.notifications.recordOf(processId) ?? this.core.register(processId);
    record.markStarted();
    return new ProcessHandle(this.core, record, null);
  }

  /**
   * Whether the executor offers `method`: the `environment/info` capability flag the method
   * table names for it (protocol/methods.ts), true for a method no flag gates. Lets a caller
   * fall back (e.g. poll with `fs/getMetadata` without `fsWatchMissing`) as the upstream agent does.
   */
  supports(method: ClientMethod): Observable<boolean> {
    const flag = METHODS[method].capability;
    if (flag === undefined) return this.environmentInfo().pipe(map(() => true));
    return this.environmentInfo().pipe(map((info) => info.capabilities[flag]));
  }

  /**
   * Live `environment/status` probe (10 s budget). Never cached, never waits for recovery:
   * while recovering it errors with DisconnectedError("exec-server environment is recovering").
   */
  environmentStatus(): Observable<'ready'> {
    return this.core.calls
      .call('environment/status', null, {
        recovery: 'failFast',
        timeoutMs: ENVIRONMENT_STATUS_TIMEOUT_MS,
      })
      .pipe(map((result) => result.status));
  }

  /**
   * Starts a process (`process/start`). Emits the handle once the executor accepted it;
   * events that arrive before are kept. Waits while recovering. If you unsubscribe before
   * the handle arrives, a process that did start is terminated for you.
   */
  startProcess(options: StartProcessOptions): Observable<ProcessHandle> {
    const core = this.core;
    return core.calls.bindOperation(
      new Observable<ProcessHandle>((subscriber) => {
        let record: ProcessRecord;
        let params: ParamsOf<'process/start'>;
        try {
          params = buildStartParams(options);
          const timeoutMs = params.networkProxy?.policyDecisionTimeoutMs;
          record = core.register(params.processId, {
            ...(timeoutMs ? { timeoutMs } : {}),
            hold: options.networkPolicy === 'prompt',
          });
        } catch (error) {
          subscriber.error(error);
          return undefined;
        }
        let callerGone = false;
        let delivered = false;
        // Detached from the caller: a start that succeeds after the caller left must still be
        // cleaned up, so the request is not cancelled by unsubscribing.
        core.calls.call('process/start', params).subscribe({
          next: (result) => {
            if (callerGone) {
              core.terminateInBackground(record);
              return;
            }
            record.markStarted();
            delivered = true;
            subscriber.next(new ProcessHandle(core, record, result.sandboxType ?? null));
            subscriber.complete();
          },
          error: (error: unknown) => {
            if (isTransportClosed(error) && core.lifecycle.terminalError === undefined) {
              // The process may have started before the transport dropped.
              core.terminateInBackground(record);
            } else {
              core.notifications.unregister(record);
            }
            subscriber.error(error);
          },
        });
        return () => {
          if (!delivered) callerGone = true;
        };
      }),
    );
  }

  /**
   * Resumes this session on a fresh transport after a loss (state `recovering`). Re-initializes
   * with the session id, requires the same id back, catches every process up with
   * `process/read` from its last published seq, then continues waiting `process/read` and
   * `process/write` calls (same `writeId`) on the new transport. Errors leave the session
   * `recovering` (retry with another transport, or `fail()`): a ServerError -32010 ("already
   * attached") is worth retrying, `unknown session id` (-32600) is not — see
   * `isRetryableResumeError`.
   */
  resume(transport: Transport): Observable<void> {
    return this.core.resume(transport);
  }

  /**
   * Retires the session because another executor session replaced it (spec §16): marks it
   * `retired`, fails every pending call and process start with DisconnectedError(message),
   * closes the transport, then fails process handles and HTTP body streams. Every observable
   * of this client, including ones subscribed later and results that already arrived,
   * errors with that DisconnectedError. Idempotent.
   */
  retire(message: string = DisconnectReason.executorReplaced): void {
    this.core.terminate('retired', new DisconnectedError(message));
  }

  /**
   * Ends the session as failed (e.g. recovery gave up): same cleanup order as `retire`, with
   * state `failed`. Idempotent; an earlier retirement or failure wins.
   */
  fail(message: string): void {
    this.core.terminate('failed', new DisconnectedError(message));
  }

  /** Closes the session deliberately; equivalent to `fail('exec-server client was closed')`. */
  close(): void {
    this.fail('exec-server client was closed');
  }
}

/**
 * True for resume errors worth another attempt on a fresh transport: transport loss, connect
 * failure or timeout, initialize timeout, and -32010 (the executor still holds the old
 * connection). `unknown session id` (-32600) and an unexpected session id are final.
 */
export function isRetryableResumeError(error: unknown): boolean {
  return (
    isTransportClosed(error) ||
    error instanceof TimeoutError ||
    error instanceof ConnectError ||
    (error instanceof ServerError && error.code === ErrorCode.sessionAlreadyAttached)
  );
}
