/**
 * `--registry URL --environment-id ID`: an endpoint of `execrx run` and friends (see endpoint.ts).
 *
 * Its first lookup leaves at once: this module imports neither the client nor the environment
 * layer (endpoint.ts is loaded after the request is sent), so `execrx run` loads them, and the
 * Noise harness transport, while the registry answers (runCommand.ts opens the endpoint before
 * it loads runProcess.ts).
 */
import { ReplaySubject, type Observable, type Subscription } from 'rxjs';
import { noiseRendezvous } from '../environment/transportParams.js';
import { NoiseChannelIdentity, type NoiseChannelPublicKeyJson } from '../noise/index.js';
import {
  EnvironmentRegistryClient,
  RegistryConnectProvider,
  type NoiseRendezvousConnectBundle,
  type NoiseRendezvousConnectProvider,
} from '../registry/index.js';
import type { Endpoint } from './endpoint.js';
import { nodeHttpPost } from './nodeHttpPost.js';

/**
 * An executor registered as `environmentId` with the registry at `registryUrl`: each
 * connection attempt gets a fresh bundle for our (per-run) Noise key, the first one asked for
 * before the endpoint is returned.
 */
export async function registryEndpoint(
  registryUrl: string,
  environmentId: string,
  bearerToken: string,
): Promise<Endpoint> {
  const registry = new EnvironmentRegistryClient({
    baseUrl: registryUrl,
    bearerToken,
    post: nodeHttpPost,
  });
  const identity = NoiseChannelIdentity.generate();
  const provider = new FirstBundleAhead(
    new RegistryConnectProvider(registry, environmentId),
    identity.publicKey().toJSON(),
  );
  // Loaded while the lookup is on the wire; the environment layer imports it again (from the
  // module cache) for the connection. A failure here shows there, so it is dropped here.
  import('../transport/noiseHarnessTransport.js').catch(() => undefined);
  try {
    const { paramsEndpoint } = await import('./endpoint.js');
    return paramsEndpoint(
      `environment ${environmentId} at ${registry.baseUrl}`,
      noiseRendezvous(provider, identity),
      async () => provider.cancel(),
    );
  } catch (error) {
    provider.cancel();
    throw error;
  }
}

/**
 * A provider that asks for the bundle of key `firstKey` at construction: the first
 * `connectBundle` for that key gets it (its value, or its error); any later call, or a first
 * call for another key, asks `provider` anew (a bundle is single-use). Guarded by
 * spec/cli/registryEndpoint.spec.ts.
 */
export class FirstBundleAhead implements NoiseRendezvousConnectProvider {
  #first: Observable<NoiseRendezvousConnectBundle> | undefined;
  readonly #firstKey: string;
  readonly #lookup: Subscription;

  constructor(
    private readonly provider: NoiseRendezvousConnectProvider,
    firstKey: NoiseChannelPublicKeyJson,
  ) {
    this.#firstKey = JSON.stringify(firstKey);
    const first = new ReplaySubject<NoiseRendezvousConnectBundle>(1);
    this.#first = first;
    this.#lookup = provider.connectBundle(firstKey).subscribe(first);
  }

  connectBundle(
    harnessPublicKey: NoiseChannelPublicKeyJson,
  ): Observable<NoiseRendezvousConnectBundle> {
    const first = this.#first;
    this.#first = undefined;
    if (first !== undefined && JSON.stringify(harnessPublicKey) === this.#firstKey) return first;
    this.#lookup.unsubscribe();
    return this.provider.connectBundle(harnessPublicKey);
  }

  /** Drops the first lookup if it is still on the wire. */
  cancel(): void {
    this.#first = undefined;
    this.#lookup.unsubscribe();
  }
}
