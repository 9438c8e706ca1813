/**
 * Where `execrx run` sends its requests: an executor at a ws:// URL, one found through a
 * registry (Noise rendezvous), or one embedded in this process (direct Noise over loopback).
 * An endpoint is the environment layer's transport parameters plus what it owns; the
 * lifecycle (connect, resume after loss, give up) is `LazyRemoteExecServerClient`'s.
 */
import { of } from 'rxjs';
import {
  noiseRendezvous,
  webSocketUrl,
  type ExecServerTransportParams,
} from '../environment/index.js';
import { NoiseChannelIdentity } from '../noise/index.js';
import {
  EnvironmentRegistryClient,
  RegistryConnectProvider,
  type NoiseRendezvousConnectProvider,
} from '../registry/index.js';
import { startDirectNoiseExecServer } from '../server/relay/index.js';
import { bearerAuthorization } from '../transport/webSocketTransport.js';

export interface Endpoint {
  /** For status and error lines, e.g. `ws://127.0.0.1:4321`. */
  readonly label: string;
  /** How the environment layer opens (and reopens) transports to it. */
  readonly params: ExecServerTransportParams;
  /** Releases what the endpoint owns (the embedded executor and its processes). */
  close(): Promise<void>;
}

/**
 * An executor somewhere else, reached over plain WebSocket; `bearerToken` goes in each
 * upgrade's `Authorization` header (for `execrx serve`/`codex exec-server --ws-auth`).
 */
export function remoteEndpoint(url: string, bearerToken?: string): Endpoint {
  const headers = bearerToken === undefined ? {} : { headers: bearerAuthorization(bearerToken) };
  return { label: url, params: webSocketUrl(url, headers), close: async () => undefined };
}

/**
 * An executor registered as `environmentId` with the registry at `registryUrl`: each
 * connection attempt asks `/connect` for a fresh bundle for our (per-run) Noise key.
 */
export function registryEndpoint(
  registryUrl: string,
  environmentId: string,
  bearerToken: string,
): Endpoint {
  const registry = new EnvironmentRegistryClient({ baseUrl: registryUrl, bearerToken });
  return {
    label: `environment ${environmentId} at ${registry.baseUrl}`,
    params: noiseRendezvous(
      new RegistryConnectProvider(registry, environmentId),
      NoiseChannelIdentity.generate(),
    ),
    close: async () => undefined,
  };
}

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
  return {
    label: `embedded executor (${server.url})`,
    params: noiseRendezvous(provider, NoiseChannelIdentity.generate()),
    close: () => server.close(),
  };
}
