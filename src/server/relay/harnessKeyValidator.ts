/**
 * Who may talk to this executor (noise-relay.md §3.4): after message 1 authenticated a
 * harness's static key, the executor asks an authority independent of the rendezvous whether
 * that key, with the registry's authorization, may use this executor. Only then is message 2
 * sent.
 */
import { map, type Observable, of } from 'rxjs';
import type { NoiseChannelPublicKey } from '../../noise/index.js';
import type { EnvironmentRegistryClient } from '../../registry/index.js';

export interface HarnessKeyValidator {
  /**
   * Emits `true` ⇒ admitted; emits `false` or errors ⇒ handshake refused (stream reset). The
   * relay unsubscribes when it gives up (timeout, stream reset, socket gone).
   */
  validateHarnessKey(
    harnessKey: NoiseChannelPublicKey,
    authorization: string,
    streamId: string,
  ): Observable<boolean>;
}

/** Admits every harness whose handshake authenticates. For tests and trusted loopback setups. */
export const acceptAllHarnessKeys: HarnessKeyValidator = {
  validateHarnessKey: () => of(true),
};

/**
 * The production validator: POST `/cloud/environment/{environmentId}/validate` with the
 * registration id, the harness key and its authorization, plus the
 * `x-codex-noise-stream-id` header (as codex 0.169.0 sends it). Admits only on
 * `{"valid": true}`; every other answer errors (the registry client's typed errors).
 */
export function registryHarnessKeyValidator(
  registry: EnvironmentRegistryClient,
  registrationId: string,
  environmentId: string,
): HarnessKeyValidator {
  return {
    validateHarnessKey: (harnessKey, authorization, streamId) =>
      registry
        .validate(environmentId, {
          executorRegistrationId: registrationId,
          harnessPublicKey: harnessKey.toJSON(),
          harnessKeyAuthorization: authorization,
          streamId,
        })
        .pipe(map(() => true)),
  };
}
