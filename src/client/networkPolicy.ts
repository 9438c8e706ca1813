/**
 * Answers to the executor's `network/policyRequest` (spec/protocol.md §9.4–§9.5): the user's
 * handler decides, within bounds; anything malformed, oversize, for an unknown process, or a
 * handler failure is answered `deny / not_allowed` (fail closed). Guarded by
 * spec/client/execServerClient.spec.ts ("network policy").
 */
import { type Observable, defer, map, of, take, throwError } from 'rxjs';
import { ErrorCode, ServerError } from '../protocol/errors.js';
import {
  NetworkPolicyRequestParams,
  type NetworkPolicyDecision,
  type NetworkPolicyRequestResult,
} from '../protocol/network.js';
import { NOT_ALLOWED as PROMPT_NOT_ALLOWED, type PolicyPrompts } from './networkPolicyPrompts.js';

/** Decides one `network/policyRequest` from the executor (spec §9.4). */
export type NetworkPolicyHandler = (
  request: NetworkPolicyRequestParams,
) => Observable<NetworkPolicyDecision>;

const NOT_ALLOWED: NetworkPolicyRequestResult = { decision: PROMPT_NOT_ALLOWED };
const MAX_POLICY_HOST_BYTES = 253;
const MAX_POLICY_PROCESS_ID_BYTES = 256;
const MAX_POLICY_REASON_BYTES = 1024;

/**
 * The answer to one policy request. `promptsOf` finds the pending-request queue of the process
 * the request names (undefined for a process this session does not know); `decide` is the
 * session's default policy for processes nobody is watching, if any.
 */
export function answerPolicyRequest(
  params: unknown,
  promptsOf: (processId: string) => PolicyPrompts | undefined,
  decide: NetworkPolicyHandler | undefined,
): Observable<NetworkPolicyRequestResult> {
  const parsed = NetworkPolicyRequestParams.safeParse(params);
  if (!parsed.success) {
    return throwError(
      () => new ServerError(ErrorCode.invalidParams, 'invalid network policy request params'),
    );
  }
  const request = parsed.data;
  const prompts = isValidPolicyRequest(request) ? promptsOf(request.processId) : undefined;
  if (prompts === undefined) return of(NOT_ALLOWED);
  const fallback = (): Observable<NetworkPolicyDecision> =>
    decide === undefined ? of(PROMPT_NOT_ALLOWED) : defer(() => decide(request)).pipe(take(1));
  return prompts.decide(request, fallback).pipe(
    map((result): NetworkPolicyRequestResult => ({
      decision: sanitizeDecision(result.decision),
    })),
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
