/**
 * Request bodies the registry accepts and the error body it answers with (noise-relay.md
 * §6.1). Requests are strict: a field we do not know is a client bug worth reporting.
 */
import * as z from 'zod';
import { noiseChannelPublicKeyJsonSchema } from '../noise/index.js';
import { NOISE_RELAY_SECURITY_PROFILE } from '../registry/index.js';

export const RegisterRequest = z.strictObject({
  security_profile: z.literal(NOISE_RELAY_SECURITY_PROFILE),
  executor_public_key: noiseChannelPublicKeyJsonSchema,
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

export const ConnectRequest = z.strictObject({
  harness_public_key: noiseChannelPublicKeyJsonSchema,
});
export type ConnectRequest = z.infer<typeof ConnectRequest>;

export const ValidateRequest = z.strictObject({
  executor_registration_id: z.string().min(1),
  harness_public_key: noiseChannelPublicKeyJsonSchema,
  harness_key_authorization: z.string(),
});
export type ValidateRequest = z.infer<typeof ValidateRequest>;

/** `DELETE /cloud/environment/{id}`: the `role=environment` URL `/register` returned. */
export const DeleteRequest = z.strictObject({ url: z.string().min(1).max(4096) });
export type DeleteRequest = z.infer<typeof DeleteRequest>;

/**
 * Error codes the registry answers with. The registry client treats 409
 * `environment_offline` as retryable (the executor may come back); the others are final.
 */
export type RegistryErrorCode =
  | 'invalid_request'
  | 'invalid_environment_id'
  | 'environment_bound'
  | 'too_many_environments'
  | 'origin_not_allowed'
  | 'store_unavailable'
  | 'invalid_public_key'
  | 'unauthorized'
  | 'not_found'
  | 'environment_not_found'
  | 'environment_offline'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'internal_error';

export interface RegistryErrorResponse {
  readonly error: { readonly code: RegistryErrorCode; readonly message: string };
}
