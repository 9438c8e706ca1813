import type { Observable } from 'rxjs';
import type { NoiseChannelPublicKeyJson } from '../noise/index.js';
import type { EnvironmentRegistryClient, NoiseRendezvousConnectBundle } from './registryClient.js';

/**
 * "Give me a fresh connect bundle for this harness public key" (codex
 * `NoiseRendezvousConnectProvider`). Called once per physical connection attempt; each
 * bundle is single-use. Emits one bundle, then completes.
 */
export interface NoiseRendezvousConnectProvider {
  /** A fresh, single-use connect bundle for `harnessPublicKey`: one bundle, then complete. */
  connectBundle(
    harnessPublicKey: NoiseChannelPublicKeyJson,
  ): Observable<NoiseRendezvousConnectBundle>;
}

/** The production provider: one registry `/connect` call per bundle. */
export class RegistryConnectProvider implements NoiseRendezvousConnectProvider {
  constructor(
    private readonly registry: EnvironmentRegistryClient,
    readonly environmentId: string,
  ) {}

  /** Asks the registry's `/connect` for a bundle for this environment. */
  connectBundle(
    harnessPublicKey: NoiseChannelPublicKeyJson,
  ): Observable<NoiseRendezvousConnectBundle> {
    return this.registry.connect(this.environmentId, harnessPublicKey);
  }
}
