/**
 * The state behind one logical exec-server session (spec/protocol.md §11): it wires the parts
 * together and owns the orderings between them.
 *
 * - sessionLifecycle.ts: the session's state (one union) and its transitions;
 * - sessionHandshake.ts: `initialize` + `initialized` on a transport;
 * - callRouter.ts: the typed `call(method, params, options)` every request goes through;
 * - notificationRouter.ts: process events, HTTP bodies and the executor's own requests;
 * - sessionResume.ts: resume on a new transport (§14.3).
 *
 * Not exported from the package: `ExecServerClient` is the public face. Everything here is
 * synchronous bookkeeping around RpcConnection; time only enters through the scheduler.
 */
import { type Observable, Subject, type SchedulerLike } from 'rxjs';
import {
  DisconnectedError,
  DisconnectReason,
  type ExecServerError,
  JsonError,
} from '../protocol/errors.js';
import { EnvironmentInfo } from '../protocol/environment.js';
import type { JsonRpcNotification } from '../protocol/jsonrpc.js';
import { RpcConnection } from '../rpc/rpcConnection.js';
import type { Transport } from '../transport/transport.js';
import { traceRequests } from '../transport/tracedTransport.js';
import type { W3cTraceContext } from '../protocol/w3cTraceContext.js';
import { CallRouter } from './callRouter.js';
import type { NetworkPolicyHandler } from './networkPolicy.js';
import { NotificationRouter, type ProcessRecord } from './notificationRouter.js';
import { type HandshakeResult, handshake } from './sessionHandshake.js';
import { SessionLifecycle } from './sessionLifecycle.js';
import { resumeSession } from './sessionResume.js';

export type { SessionState } from './sessionLifecycle.js';
export type { NetworkPolicyHandler } from './networkPolicy.js';
export type { ProcessRecord } from './notificationRouter.js';

export interface SessionCoreOptions {
  readonly clientName: string;
  readonly initializeTimeoutMs: number;
  readonly scheduler: SchedulerLike | undefined;
  readonly recovery: boolean;
  readonly handleNetworkPolicyRequest: NetworkPolicyHandler | undefined;
  /** Deadline of a network policy request whose process names none. */
  readonly networkPolicyTimeoutMs: number;
  /** Adds `trace` to every request on every transport of the session, when set. */
  readonly traceContext: (() => W3cTraceContext | undefined) | undefined;
}

export class SessionCore {
  readonly lifecycle = new SessionLifecycle();
  // Made on first use (many sessions never call, never see a notification or never watch
  // `disconnected$`).
  private callRouter: CallRouter | undefined;
  private notificationRouter: NotificationRouter | undefined;
  private disconnects: Subject<DisconnectedError> | undefined;
  private established: HandshakeResult | undefined;
  private environmentInfo: EnvironmentInfo | undefined;

  constructor(readonly options: SessionCoreOptions) {}

  /**
   * The typed call every request goes through. Made on first use; a router made after the
   * session ended fails its calls with the terminal error (callRouter.ts).
   */
  get calls(): CallRouter {
    return (this.callRouter ??= new CallRouter({
      lifecycle: this.lifecycle,
      scheduler: this.options.scheduler,
      recovery: this.options.recovery,
      transportLost: (rpc, reason) => this.onTransportLost(rpc, reason),
    }));
  }

  /**
   * Process events, HTTP bodies and the executor's own requests of this session. Made on
   * first use; made after the session ended, it starts ended too (`terminate` step 3).
   */
  get notifications(): NotificationRouter {
    if (this.notificationRouter === undefined) {
      this.notificationRouter = new NotificationRouter({
        policy: this.options.handleNetworkPolicyRequest,
        policyTimeoutMs: this.options.networkPolicyTimeoutMs,
        scheduler: this.options.scheduler,
        dropReason: () =>
          this.lifecycle.terminalError?.message ?? DisconnectReason.transportDisconnected,
      });
      const terminal = this.lifecycle.terminalError;
      if (terminal) this.notificationRouter.failAll(terminal);
    }
    return this.notificationRouter;
  }

  /** The executor's session id (stable across resume); empty before the handshake. */
  get sessionId(): string {
    return this.established?.sessionId ?? '';
  }

  /** Each transport loss, with its reason; completes when the session ends. */
  get disconnected$(): Observable<DisconnectedError> {
    if (this.disconnects === undefined) {
      this.disconnects = new Subject();
      if (this.lifecycle.terminalError) this.disconnects.complete();
    }
    return this.disconnects.asObservable();
  }

  /** Wraps a transport in an RpcConnection whose traffic this session routes. */
  openRpc(transport: Transport): RpcConnection {
    const trace = this.options.traceContext;
    return new RpcConnection(trace ? traceRequests(transport, trace) : transport, {
      handleRequest: (method, params) => this.notifications.answer(method, params),
      onNotification: (notification, rpc) => this.dispatch(rpc, notification),
      onClose: (reason, rpc) => this.onTransportLost(rpc, reason),
    });
  }

  /** The first handshake on `rpc` (see sessionHandshake.ts). */
  handshake(rpc: RpcConnection, resumeSessionId: string | null): Observable<HandshakeResult> {
    return handshake(rpc, resumeSessionId, this.options);
  }

  /** Makes `rpc` the live transport of the session `result` named (connecting → connected). */
  establish(rpc: RpcConnection, result: HandshakeResult): void {
    this.lifecycle.install(rpc);
    this.established = result;
  }

  /** Resumes the session on a new transport (sessionResume.ts). */
  resume(transport: Transport): Observable<void> {
    return this.calls.bindOperation(
      resumeSession(
        {
          lifecycle: this.lifecycle,
          notifications: this.notifications,
          handshake: this.options,
          sessionId: this.sessionId,
          openRpc: (next) => this.openRpc(next),
        },
        transport,
      ),
    );
  }

  /**
   * The session's environment info: cached once known, else decoded from the `initialize`
   * result (JsonError if it does not match the protocol), else undefined (ask the executor).
   */
  decodedEnvironmentInfo(): EnvironmentInfo | undefined {
    const initial = this.established?.environmentInfo;
    if (this.environmentInfo === undefined && initial !== undefined) {
      const parsed = EnvironmentInfo.safeParse(initial);
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

  /** Adds a route for a process about to be started; errors once the session ended. */
  register(processId: string, policy: { timeoutMs?: number; hold?: boolean } = {}): ProcessRecord {
    const terminal = this.lifecycle.terminalError;
    if (terminal) throw terminal;
    return this.notifications.register(processId, policy);
  }

  /** Fires a `process/terminate` that survives recovery; failures are ignored (cleanup). */
  terminateInBackground(record: ProcessRecord): void {
    this.calls
      .call('process/terminate', { processId: record.processId }, { recovery: 'resend' })
      .subscribe({
        error: () => this.notifications.unregister(record),
        complete: () => this.notifications.unregister(record),
      });
  }

  /** Retires (`retired`) or fails the session for good (spec §16 ordering). */
  terminate(kind: 'retired' | 'failed', error: DisconnectedError): void {
    // 1. Mark: from here on every result observed through this session is rejected.
    const ended = this.lifecycle.end(kind, error);
    if (ended === null) return;
    // 2. Pending calls (including process starts and calls waiting for recovery) fail now,
    //    before any stream cleanup.
    this.callRouter?.abortAll(error);
    ended.rpc?.close(error);
    // 3. Then process handles and HTTP body streams.
    this.notificationRouter?.failAll(error);
    this.disconnects?.complete();
  }

  private dispatch(rpc: RpcConnection, notification: JsonRpcNotification): void {
    if (this.lifecycle.terminalError) return;
    try {
      this.notifications.dispatch(notification);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      // A fault on one transport: drop it and let recovery (or failure) take over.
      this.onTransportLost(
        rpc,
        new DisconnectedError(`exec-server notification handling failed: ${detail}`),
      );
      rpc.close();
    }
  }

  private onTransportLost(rpc: RpcConnection, reason: ExecServerError): void {
    const error =
      reason instanceof DisconnectedError
        ? reason
        : new DisconnectedError(`${DisconnectReason.transportDisconnected}: ${reason.message}`, {
            cause: reason,
          });
    if (!this.lifecycle.lose(rpc, error)) return;
    this.disconnects?.next(error);
    if (!this.options.recovery) {
      this.terminate('failed', error);
      return;
    }
    // Body streams never survive a transport loss (spec §14.2 step 2).
    this.notificationRouter?.failHttpStreams(error);
    this.lifecycle.recover();
  }
}
