/**
 * Server→client network policy (spec/protocol.md §9.4). Only used for processes started with
 * an executor-local network proxy. Note the snake_case `protocol` enum and the `type` tag.
 */
import { z } from 'zod';
import { ProcessId } from './process.js';

export const NetworkProtocol = z.enum(['http', 'https_connect', 'socks5_tcp', 'socks5_udp']);
export type NetworkProtocol = z.infer<typeof NetworkProtocol>;

export const NetworkPolicyRequestParams = z.object({
  processId: ProcessId,
  request: z.object({
    protocol: NetworkProtocol,
    host: z.string(),
    port: z.number().int().min(0).max(65535),
  }),
});
export type NetworkPolicyRequestParams = z.infer<typeof NetworkPolicyRequestParams>;

export const NetworkPolicyDecision = z.discriminatedUnion('type', [
  z.object({ type: z.literal('allow') }),
  z.object({ type: z.literal('deny'), reason: z.string() }),
  z.object({ type: z.literal('ask'), reason: z.string() }),
]);
export type NetworkPolicyDecision = z.infer<typeof NetworkPolicyDecision>;

export const NetworkPolicyRequestResult = z.object({ decision: NetworkPolicyDecision });
export type NetworkPolicyRequestResult = z.infer<typeof NetworkPolicyRequestResult>;

/** Audit record the executor may push after deciding; parsed leniently, ignored if malformed. */
export const NetworkPolicyDecisionNotification = z.object({
  processId: ProcessId,
  timestamp: z.unknown(),
  scope: z.unknown(),
  decision: z.unknown(),
  source: z.unknown(),
  reason: z.unknown(),
  protocol: z.unknown(),
  host: z.string(),
  port: z.number().int(),
  method: z.string().nullish(),
  client: z.unknown().optional(),
  policyOverride: z.boolean().default(false),
});
export type NetworkPolicyDecisionNotification = z.infer<typeof NetworkPolicyDecisionNotification>;
