/**
 * Answers to the executor's `network/policyRequest` (spec/protocol.md §9.4–§9.5): the user's
 * handler decides, within bounds; anything malformed, oversize, for an unknown process, or a
 * handler failure is answered `deny / not_allowed` (fail closed). Guarded by
 * spec/client/execServerClient.spec.ts ("network policy").
 */
import { type Observable, catchError, defer, map, of, take, throwError } from 'rxjs';
import { ErrorCode, ServerError } from '../protocol/errors.js';
import {
  NetworkPolicyRequestParams,
  type NetworkPolicyDecision,
  type NetworkPolicyRequestResult,
} from '../protocol/network.js';

/** Decides one `network/policyRequest` from the executor (spec §9.4). */
export type NetworkPolicyHandler = (
  request: NetworkPolicyRequestParams,
) => Observable<NetworkPolicyDecision>;

const NOT_ALLOWED: NetworkPolicyRequestResult = {
  decision: { type: 'deny', reason: 'not_allowed' },
};
const MAX_POLICY_HOST_BYTES = 253;
const MAX_POLICY_PROCESS_ID_BYTES = 256;
const MAX_POLICY_REASON_BYTES = 1024;

/**
 * The answer to one policy request. `knowsProcess` says whether the request names a process of
 * this session; `decide` is the user's handler, if any.
 */
export function answerPolicyRequest(
  params: unknown,
  knowsProcess: (processId: string) => boolean,
  decide: NetworkPolicyHandler | undefined,
): Observable<NetworkPolicyRequestResult> {
  const parsed = NetworkPolicyRequestParams.safeParse(params);
  if (!parsed.success) {
    return throwError(
      () => new ServerError(ErrorCode.invalidParams, 'invalid network policy request params'),
    );
  }
  const request = parsed.data;
  if (decide === undefined || !knowsProcess(request.processId) || !isValidPolicyRequest(request)) {
    return of(NOT_ALLOWED);
  }
  return defer(() => decide(request)).pipe(
    take(1),
    map((decision): NetworkPolicyRequestResult => ({ decision: sanitizeDecision(decision) })),
    catchError(() => of(NOT_ALLOWED)),
  );
}

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  return encoder.encode(text).byteLength;
}

function isValidPolicyRequest(request: NetworkPolicyRequestParams): boolean {
  const processIdBytes = utf8Length(request.processId);
  const host = request.request.host;
  return (
    processIdBytes > 0 &&
    processIdBytes <= MAX_POLICY_PROCESS_ID_BYTES &&
    host.length > 0 &&
    utf8Length(host) <= MAX_POLICY_HOST_BYTES &&
    !/[\s\p{Cc}]/u.test(host)
  );
}

function sanitizeDecision(decision: NetworkPolicyDecision): NetworkPolicyDecision {
  if (decision.type === 'allow') return decision;
  const reason = decision.reason;
  if (utf8Length(reason) > MAX_POLICY_REASON_BYTES || /\p{Cc}/u.test(reason)) {
    return { type: decision.type, reason: 'not_allowed' };
  }
  return decision;
}
