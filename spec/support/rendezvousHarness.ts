/**
 * Test helper: the harness side of the Noise path through one of our rendezvous servers —
 * `/connect` with the registry client, then `connectNoiseHarness` on the bundle.
 */
import { type Observable, firstValueFrom, switchMap, timeout } from 'rxjs';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import {
  EnvironmentRegistryClient,
  type NoiseRendezvousConnectBundle,
} from '../../src/registry/index.js';
import type { Rendezvous } from '../../src/rendezvous/index.js';
import {
  connectNoiseHarness,
  type NoiseHarnessOptions,
} from '../../src/transport/noiseHarnessTransport.js';
import type { Transport } from '../../src/transport/transport.js';

export interface RendezvousHarness {
  readonly identity: NoiseChannelIdentity;
  readonly registry: EnvironmentRegistryClient;
  /** A fresh bundle from `/connect`. */
  bundle(): Promise<NoiseRendezvousConnectBundle>;
  /** Cold: `/connect`, then the Noise handshake through the rendezvous. */
  connect(options?: NoiseHarnessOptions): Observable<Transport>;
}

export function rendezvousHarness(
  rendezvous: Rendezvous,
  environmentId: string,
  token: string,
  identity: NoiseChannelIdentity = NoiseChannelIdentity.generate(),
): RendezvousHarness {
  const registry = new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: token });
  return {
    identity,
    registry,
    bundle: () =>
      firstValueFrom(registry.connect(environmentId, identity.toJSON()).pipe(timeout(10_000))),
    connect: (options) =>
      registry
        .connect(environmentId, identity.toJSON())
        .pipe(switchMap((bundle) => connectNoiseHarness(bundle, identity, options))),
  };
}
