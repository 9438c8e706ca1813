/** `--registry URL --environment-id ID`: an endpoint of `execrx run` and friends (see endpoint.ts). */
import { noiseRendezvous } from '../environment/transportParams.js';
import { NoiseChannelIdentity } from '../noise/index.js';
import { EnvironmentRegistryClient, RegistryConnectProvider } from '../registry/index.js';
import { paramsEndpoint, type Endpoint } from './endpoint.js';
import { nodeHttpPost } from './nodeHttpPost.js';

/**
 * An executor registered as `environmentId` with the registry at `registryUrl`: each
 * connection attempt asks `/connect` for a fresh bundle for our (per-run) Noise key.
 */
export function registryEndpoint(
  registryUrl: string,
  environmentId: string,
  bearerToken: string,
): Endpoint {
  const registry = new EnvironmentRegistryClient({
    baseUrl: registryUrl,
    bearerToken,
    post: nodeHttpPost,
  });
  return paramsEndpoint(
    `environment ${environmentId} at ${registry.baseUrl}`,
    noiseRendezvous(
      new RegistryConnectProvider(registry, environmentId),
      NoiseChannelIdentity.generate(),
    ),
  );
}
