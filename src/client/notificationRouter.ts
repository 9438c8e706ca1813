/**
 * Routing of what the executor sends unasked (spec/protocol.md §6.5, §8.2, §9.4): process
 * events to the process they name, HTTP body deltas to their stream, and the executor's own
 * requests (`network/policyRequest`) to their answer. Owns the session's process routes and
 * body streams. A notification that does not match the protocol throws: the session treats
 * that as a fault of the transport it came on.
 */
import { type Observable, type SchedulerLike, Subject, finalize, of } from 'rxjs';
import type { ExecServerError } from '../protocol/errors.js';
import { ProtocolError } from '../protocol/errors.js';
import type { JsonRpcNotification } from '../protocol/jsonrpc.js';
import type { ServerMethod } from '../protocol/methods.js';
import { HttpBodyStreams, checkDeltaSize, type HttpBodyStream } from './httpBodyStreams.js';
import {
  NetworkPolicyDecisionNotification,
  type NetworkPolicyRequestResult,
} from '../protocol/network.js';
import { answerPolicyRequest, type NetworkPolicyHandler } from './networkPolicy.js';
import { NOT_ALLOWED, PolicyPrompts, type PolicyPromptsOptions } from './networkPolicyPrompts.js';
import type { ProcessEvent } from './processEvents.js';
import { ProcessEventLog } from './processEventLog.js';
import { decodeOutputNotification } from './fastpath/outputNotification.js';
import { decodeNotification } from './wireDecode.js';

/** One process the session routes notifications to. */
export class ProcessRecord {
  readonly log: ProcessEventLog;
  /** Its pending `network/policyRequest`s (networkPolicyPrompts.ts). */
  readonly policy: PolicyPrompts;
  private started = false;

  constructor(
    readonly processId: string,
    policy: Omit<PolicyPromptsOptions, 'processId'>,
  ) {
    this.log = new ProcessEventLog(processId);
    this.policy = new PolicyPrompts({ processId, ...policy });
  }

  /** False while `process/start` is in flight; only recoverable processes are re-read on resume. */
  get recoverable(): boolean {
    return this.started && !this.log.isFinished;
  }

  /** The executor accepted `process/start`. */
  markStarted(): void {
    this.started = true;
  }
}

/** The executor's requests this client answers, by method (the rest answer -32601). */
type ServerRequestHandlers = {
  readonly [M in ServerMethod]: (params: unknown) => Observable<unknown>;
};

/** Server→client policy requests answered at once across the session's transports (§9.5). */
const MAX_IN_FLIGHT_POLICY_REQUESTS = 256;

export interface NotificationRouterOptions {
  /** Decides requests of processes nobody watches; without it they are denied. */
  readonly policy: NetworkPolicyHandler | undefined;
  /** Deadline of a policy request when its process names none. */
  readonly policyTimeoutMs: number;
  readonly scheduler: SchedulerLike | undefined;
  /** Why a policy request was dropped unanswered (the session's end, else the transport's). */
  readonly dropReason: () => string;
}

export class NotificationRouter {
  private readonly processes = new Map<string, ProcessRecord>();
  private readonly httpStreams = new HttpBodyStreams();
  private nextHttpRequestId = 1;
  private readonly serverRequests: ServerRequestHandlers;
  private policyRequestsInFlight = 0;
  private readonly decisions = new Subject<NetworkPolicyDecisionNotification>();

  constructor(private readonly options: NotificationRouterOptions) {
    this.serverRequests = {
      'network/policyRequest': (params) => this.answerPolicy(params),
    };
  }

  /** `network/policyDecision` audit records of this session's processes; completes at its end. */
  get policyDecisions$(): Observable<NetworkPolicyDecisionNotification> {
    return this.decisions.asObservable();
  }

  /**
   * Adds a route for a process about to be started, with its policy deadline (if it names
   * one) and whether its policy requests wait for a watcher (`hold`).
   */
  register(processId: string, policy: { timeoutMs?: number; hold?: boolean } = {}): ProcessRecord {
    if (this.processes.has(processId)) {
      throw new ProtocolError(`session already registered for process ${processId}`);
    }
    const record = new ProcessRecord(processId, {
      timeoutMs: policy.timeoutMs ?? this.options.policyTimeoutMs,
      hold: policy.hold ?? false,
      scheduler: this.options.scheduler,
      dropReason: this.options.dropReason,
    });
    this.processes.set(processId, record);
    return record;
  }

  /** The route of a process this session knows, if any. */
  recordOf(processId: string): ProcessRecord | undefined {
    return this.processes.get(processId);
  }

  /** A fresh `requestId` for a buffered HTTP request (no body route). */
  httpRequestId(): string {
    return `http-${this.nextHttpRequestId++}`;
  }

  /** Removes a route if it still belongs to `record`; its pending policy requests are denied. */
  unregister(record: ProcessRecord): void {
    if (this.processes.get(record.processId) === record) this.processes.delete(record.processId);
    record.policy.end('process ended', true);
  }

  /** The processes to catch up after a resume (started, not finished). */
  recoverableProcesses(): ProcessRecord[] {
    return [...this.processes.values()].filter((record) => record.recoverable);
  }

  /** A route for the body of a new streamed request, with a fresh id (§8.2). */
  openHttpStream(): HttpBodyStream {
    return this.httpStreams.register(this.httpRequestId());
  }

  closeHttpStream(stream: HttpBodyStream): void {
    this.httpStreams.remove(stream);
  }

  /** Body streams never survive a transport loss (spec §14.2 step 2). */
  failHttpStreams(error: ExecServerError): void {
    this.httpStreams.failAll(error);
  }

  /** Fails every process handle, then every body stream (spec §16 step 4). */
  failAll(error: ExecServerError): void {
    const records = [...this.processes.values()];
    this.processes.clear();
    for (const record of records) {
      record.policy.end(error.message, false);
      record.log.fail(error);
    }
    this.httpStreams.failAll(error);
    this.decisions.complete();
  }

  /** The in-flight cap, then the process's own queue (networkPolicy.ts, networkPolicyPrompts.ts). */
  private answerPolicy(params: unknown): Observable<NetworkPolicyRequestResult> {
    if (this.policyRequestsInFlight >= MAX_IN_FLIGHT_POLICY_REQUESTS) {
      return of({ decision: NOT_ALLOWED });
    }
    this.policyRequestsInFlight++;
    return answerPolicyRequest(
      params,
      (id) => this.processes.get(id)?.policy,
      this.options.policy,
    ).pipe(finalize(() => this.policyRequestsInFlight--));
  }

  /** The answer to an executor request, or undefined for a method this client does not answer. */
  answer(method: string, params: unknown): Observable<unknown> | undefined {
    if (!Object.prototype.hasOwnProperty.call(this.serverRequests, method)) return undefined;
    return this.serverRequests[method as ServerMethod](params);
  }

  /** Routes one notification; throws when it does not match the protocol. */
  dispatch(notification: JsonRpcNotification): void {
    switch (notification.method) {
      case 'process/output': {
        const { processId, event } = decodeOutputNotification(notification);
        this.route(processId, event);
        return;
      }
      case 'process/exited': {
        const params = decodeNotification('process/exited', notification);
        this.route(params.processId, {
          type: 'exited',
          seq: params.seq,
          exitCode: params.exitCode,
          sandboxDenied: params.sandboxDenied ?? false,
        });
        return;
      }
      case 'process/closed': {
        const params = decodeNotification('process/closed', notification);
        this.route(params.processId, { type: 'closed', seq: params.seq });
        return;
      }
      case 'http/request/bodyDelta': {
        // Size first: an oversize delta must not be decoded at all.
        checkDeltaSize(
          (notification.params as { deltaBase64?: unknown } | null | undefined)?.deltaBase64,
        );
        this.httpStreams.dispatch(decodeNotification('http/request/bodyDelta', notification));
        return;
      }
      case 'network/policyDecision': {
        // Malformed records and records for unknown processes are ignored (§11.5).
        const parsed = NetworkPolicyDecisionNotification.safeParse(notification.params);
        if (parsed.success && this.processes.has(parsed.data.processId)) {
          this.decisions.next(parsed.data);
        }
        return;
      }
      default:
        return; // fs/missingChanged, unknown methods
    }
  }

  private route(processId: string, event: ProcessEvent): void {
    const record = this.processes.get(processId);
    if (record === undefined) return;
    record.log.accept(event);
    if (record.log.isFinished) this.unregister(record);
  }
}
