/**
 * Server→client network policy (spec/protocol.md §9.4). Only used for processes started with
 * an executor-local network proxy. Note the snake_case `protocol` enum and the `type` tag.
 */
import * as z from 'zod';
import { ProcessId } from './process.js';

/** The kind of connection a sandboxed process asked the network proxy for. */
export const NetworkProtocol = z.enum(['http', 'https_connect', 'socks5_tcp', 'socks5_udp']);
export type NetworkProtocol = z.infer<typeof NetworkProtocol>;

/**
 * Params of the `network/policyRequest` request (executor → client); its entry in `METHODS` ties it
 * to the method.
 */
export const NetworkPolicyRequestParams = z.object({
  processId: ProcessId,
  request: z.object({
    protocol: NetworkProtocol,
    host: z.string(),
    port: z.number().int().min(0).max(65535),
  }),
});
export type NetworkPolicyRequestParams = z.infer<typeof NetworkPolicyRequestParams>;

/** The client's answer to `network/policyRequest`: `allow`, or `deny` / `ask` with a reason. */
export const NetworkPolicyDecision = z.discriminatedUnion('type', [
  z.object({ type: z.literal('allow') }),
  z.object({ type: z.literal('deny'), reason: z.string() }),
  z.object({ type: z.literal('ask'), reason: z.string() }),
]);
export type NetworkPolicyDecision = z.infer<typeof NetworkPolicyDecision>;

/** Result of the `network/policyRequest` request; its entry in `METHODS` ties it to the method. */
export const NetworkPolicyRequestResult = z.object({ decision: NetworkPolicyDecision });
export type NetworkPolicyRequestResult = z.infer<typeof NetworkPolicyRequestResult>;

/**
 * Audit record the executor pushes after each proxy decision (baseline policy or the client's
 * decider). Shape as observed on 0.169.0 (spec/fixtures/wire/network-policy.json).
 */
export const NetworkPolicyDecisionNotification = z.object({
  processId: ProcessId,
  /** RFC 3339 UTC timestamp with milliseconds. */
  timestamp: z.string(),
  /** e.g. `domain`. */
  scope: z.string(),
  /** `allow`, `deny` or `ask`. */
  decision: z.string(),
  /** e.g. `baseline_policy` or `decider`. */
  source: z.string(),
  /** e.g. `not_allowed`, `not_allowed_local`, or the decider's reason. */
  reason: z.string().nullish(),
  protocol: NetworkProtocol.or(z.string()),
  host: z.string(),
  port: z.number().int(),
  /** HTTP method, when the request was HTTP. */
  method: z.string().nullish(),
  /** Peer address of the proxied client inside the process, `ip:port`. */
  client: z.string().nullish(),
  policyOverride: z.boolean().default(false),
});
export type NetworkPolicyDecisionNotification = z.infer<typeof NetworkPolicyDecisionNotification>;
