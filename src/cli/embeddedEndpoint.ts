/** No target option: an executor embedded in this process, as an endpoint of `execrx run` and friends (see endpoint.ts). */
import { of } from 'rxjs';
import { noiseRendezvous } from '../environment/transportParams.js';
import { NoiseChannelIdentity } from '../noise/index.js';
import type { NoiseRendezvousConnectProvider } from '../registry/index.js';
import { startDirectNoiseExecServer } from '../server/relay/index.js';
import { paramsEndpoint, type Endpoint } from './endpoint.js';

/**
 * Starts a direct-Noise executor inside this process on loopback and reaches it through the
 * full client stack: Noise handshake, encrypted relay frames, JSON-RPC, session.
 */
export async function startEmbeddedEndpoint(): Promise<Endpoint> {
  const server = await startDirectNoiseExecServer({ listen: 'ws://127.0.0.1:0' });
  // What a registry would hand out; the embedded executor admits any harness key.
  const provider: NoiseRendezvousConnectProvider = {
    connectBundle: () =>
      of({
        websocketUrl: server.url,
        environmentId: server.environmentId,
        executorRegistrationId: server.registrationId,
        executorPublicKey: server.identity.toJSON(),
        harnessKeyAuthorization: 'embedded',
      }),
  };
  return paramsEndpoint(
    `embedded executor (${server.url})`,
    noiseRendezvous(provider, NoiseChannelIdentity.generate()),
    () => server.close(),
  );
}
