/**
 * Routing of what the executor sends unasked (spec/protocol.md §6.5, §8.2, §9.4): process
 * events to the process they name, HTTP body deltas to their stream, and the executor's own
 * requests (`network/policyRequest`) to their answer. Owns the session's process routes and
 * body streams. A notification that does not match the protocol throws: the session treats
 * that as a fault of the transport it came on.
 */
import type { Observable } from 'rxjs';
import type { ExecServerError } from '../protocol/errors.js';
import { ProtocolError } from '../protocol/errors.js';
import type { JsonRpcNotification } from '../protocol/jsonrpc.js';
import type { ServerMethod } from '../protocol/methods.js';
import { HttpBodyStreams, checkDeltaSize, type HttpBodyStream } from './httpBodyStreams.js';
import { answerPolicyRequest, type NetworkPolicyHandler } from './networkPolicy.js';
import type { ProcessEvent } from './processEvents.js';
import { ProcessEventLog } from './processEventLog.js';
import { decodeValidatedBase64 } from '../protocol/base64.js';
import { decodeNotification } from './wireDecode.js';

/** One process the session routes notifications to. */
export class ProcessRecord {
  readonly log: ProcessEventLog;
  private started = false;

  constructor(readonly processId: string) {
    this.log = new ProcessEventLog(processId);
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

export class NotificationRouter {
  private readonly processes = new Map<string, ProcessRecord>();
  private readonly httpStreams = new HttpBodyStreams();
  private nextHttpRequestId = 1;
  private readonly serverRequests: ServerRequestHandlers;

  constructor(policy: NetworkPolicyHandler | undefined) {
    this.serverRequests = {
      'network/policyRequest': (params) =>
        answerPolicyRequest(params, (id) => this.processes.has(id), policy),
    };
  }

  /** Adds a route for a process about to be started. */
  register(processId: string): ProcessRecord {
    if (this.processes.has(processId)) {
      throw new ProtocolError(`session already registered for process ${processId}`);
    }
    const record = new ProcessRecord(processId);
    this.processes.set(processId, record);
    return record;
  }

  /** Removes a route if it still belongs to `record`. */
  unregister(record: ProcessRecord): void {
    if (this.processes.get(record.processId) === record) this.processes.delete(record.processId);
  }

  /** The processes to catch up after a resume (started, not finished). */
  recoverableProcesses(): ProcessRecord[] {
    return [...this.processes.values()].filter((record) => record.recoverable);
  }

  /** A route for the body of a new streamed request, with a fresh id (§8.2). */
  openHttpStream(): HttpBodyStream {
    return this.httpStreams.register(`http-${this.nextHttpRequestId++}`);
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
    for (const record of records) record.log.fail(error);
    this.httpStreams.failAll(error);
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
        const params = decodeNotification('process/output', notification);
        this.route(params.processId, {
          type: 'output',
          seq: params.seq,
          stream: params.stream,
          chunk: decodeValidatedBase64(params.chunk),
        });
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
      default:
        return; // network/policyDecision audit records, fs/missingChanged, unknown methods
    }
  }

  private route(processId: string, event: ProcessEvent): void {
    const record = this.processes.get(processId);
    if (record === undefined) return;
    record.log.accept(event);
    if (record.log.isFinished) this.unregister(record);
  }
}
