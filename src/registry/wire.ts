/**
 * snake_case JSON bodies of the registry API (noise-relay.md §6.1). Responses may carry
 * fields we do not use (newer registries add e.g. `transport_policy`), so response objects
 * are not strict; the public-key objects are (codex uses `deny_unknown_fields`).
 */
import * as z from 'zod';
import { type NoiseChannelPublicKeyJson, noiseChannelPublicKeyJsonSchema } from '../noise/index.js';

/** The only security profile codex speaks (`noise_hybrid_ik_v1`). */
export const NOISE_RELAY_SECURITY_PROFILE = 'noise_hybrid_ik_v1';

export interface RegisterRequestBody {
  readonly security_profile: typeof NOISE_RELAY_SECURITY_PROFILE;
  readonly executor_public_key: NoiseChannelPublicKeyJson;
}

export const RegisterResponseBody = z.object({
  environment_id: z.string(),
  url: z.string(),
  security_profile: z.string(),
  executor_registration_id: z.string(),
});
export type RegisterResponseBody = z.infer<typeof RegisterResponseBody>;

export interface ConnectRequestBody {
  readonly harness_public_key: NoiseChannelPublicKeyJson;
}

export const ConnectResponseBody = z.object({
  environment_id: z.string(),
  url: z.string(),
  security_profile: z.string(),
  executor_registration_id: z.string(),
  executor_public_key: noiseChannelPublicKeyJsonSchema,
  harness_key_authorization: z.string(),
});
export type ConnectResponseBody = z.infer<typeof ConnectResponseBody>;

export interface ValidateRequestBody {
  readonly executor_registration_id: string;
  readonly harness_public_key: NoiseChannelPublicKeyJson;
  readonly harness_key_authorization: string;
}

export const ValidateResponseBody = z.object({ valid: z.boolean() });

/** `{"error":{"code","message"}}` of a non-2xx answer; anything else is shown as raw text. */
export const RegistryErrorBody = z.object({
  error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});
