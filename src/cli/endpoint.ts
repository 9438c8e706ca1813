/**
 * Where `execrx run` sends its requests: an executor at a ws:// URL, one found through a
 * registry (Noise rendezvous), one embedded in this process (direct Noise over loopback), or
 * an environment of the user's Codex setup. An endpoint opens the environment layer's session
 * owner and owns what it started; the lifecycle (connect, resume after loss, give up) is the
 * environment layer's.
 */
import { of, type Observable } from 'rxjs';
import type { ExecServerClient } from '../client/index.js';
import {
  CodexEnvironments,
  readCodexSetup,
  type CodexSetup,
  type CodexSetupEnvironment,
} from '../environment/codexSetup.js';
import {
  LazyRemoteExecServerClient,
  LOCAL_ENVIRONMENT_ID,
  noiseRendezvous,
  webSocketUrl,
  type ExecServerTransportParams,
} from '../environment/index.js';
import { SingleSessionEnvironment } from '../environment/singleSessionEnvironment.js';
import { NoiseChannelIdentity } from '../noise/index.js';
import {
  EnvironmentRegistryClient,
  RegistryConnectProvider,
  type NoiseRendezvousConnectProvider,
} from '../registry/index.js';
import { startLocalExecutor } from '../server/localExecutor.js';
import { startDirectNoiseExecServer } from '../server/relay/index.js';
import { bearerAuthorization } from '../transport/webSocketTransport.js';
import { UsageError } from './usageError.js';

/** The environment layer's owner of one environment's session. */
export interface SessionOwner {
  /** The session: connects (or joins the attempt, or waits for recovery) first. */
  get(): Observable<ExecServerClient>;
  close(): void;
}

export interface Endpoint {
  /** For status and error lines, e.g. `ws://127.0.0.1:4321`. */
  readonly label: string;
  /** Opens the session owner (one per run). */
  open(): SessionOwner;
  /** Releases what the endpoint owns (the embedded executor and its processes). */
  close(): Promise<void>;
}

/** An endpoint the environment layer reaches with transport parameters. */
function paramsEndpoint(
  label: string,
  params: ExecServerTransportParams,
  close: () => Promise<void> = async () => undefined,
): Endpoint {
  return { label, open: () => new LazyRemoteExecServerClient(params), close };
}

/** An executor somewhere else, reached over plain WebSocket (with a bearer token for `--ws-auth`). */
function remoteEndpoint(url: string, bearerToken?: string): Endpoint {
  const options = bearerToken === undefined ? {} : { headers: bearerAuthorization(bearerToken) };
  return paramsEndpoint(url, webSocketUrl(url, options));
}

/** Environment `id` of a Codex setup: `local`, or the setup's entry (`chosen`, one). */
export interface ConfiguredChoice {
  readonly setup: CodexSetup;
  readonly chosen: readonly CodexSetupEnvironment[];
  readonly isLocal: boolean;
}

/**
 * Finds environment `id` in the user's Codex setup (the Noise variables,
 * $CODEX_HOME/environments.toml or CODEX_EXEC_SERVER_URL, as codex reads them). An id the setup
 * does not configure is a UsageError of `command` listing the ones it does.
 */
export function findConfiguredEnvironment(id: string, command: string): ConfiguredChoice {
  const setup = readCodexSetup();
  const chosen = setup.environments.filter((environment) => environment.id === id);
  const isLocal = id === LOCAL_ENVIRONMENT_ID && setup.includeLocal;
  if (chosen.length === 0 && !isLocal) {
    const ids = [
      ...(setup.includeLocal ? [LOCAL_ENVIRONMENT_ID] : []),
      ...setup.environments.map((environment) => environment.id),
    ];
    const where =
      setup.path ??
      (setup.source === 'noise-variables'
        ? 'the CODEX_EXEC_SERVER_NOISE_* variables'
        : 'CODEX_EXEC_SERVER_URL');
    throw new UsageError(
      `environment \`${id}\` is not configured by ${where}; configured: ${ids.length === 0 ? 'none' : ids.join(', ')}`,
      command,
    );
  }
  return { setup, chosen, isLocal };
}

/**
 * Environment `id` of the user's Codex setup (findConfiguredEnvironment); `local` is an
 * executor in this process.
 */
export function configuredEndpoint(id: string, command: string): Endpoint {
  const { setup, chosen, isLocal } = findConfiguredEnvironment(id, command);
  const local = isLocal ? startLocalExecutor() : undefined;
  const environments = CodexEnvironments.fromSetup(
    { ...setup, environments: chosen, default: { id }, includeLocal: isLocal },
    local === undefined ? {} : { local },
  );
  const environment = environments.get(id)!;
  const kind = isLocal ? 'local executor' : (chosen[0]?.transport.kind ?? 'environment');
  return {
    label: `environment ${id} (${kind})`,
    open: () =>
      environment instanceof SingleSessionEnvironment ? environment : environment.client,
    close: async () => {
      environments.close();
      // Wait until the local executor's processes are gone (closing started it).
      await local?.shutdown();
    },
  };
}

/**
 * An executor registered as `environmentId` with the registry at `registryUrl`: each
 * connection attempt asks `/connect` for a fresh bundle for our (per-run) Noise key.
 */
function registryEndpoint(
  registryUrl: string,
  environmentId: string,
  bearerToken: string,
): Endpoint {
  const registry = new EnvironmentRegistryClient({ baseUrl: registryUrl, bearerToken });
  return paramsEndpoint(
    `environment ${environmentId} at ${registry.baseUrl}`,
    noiseRendezvous(
      new RegistryConnectProvider(registry, environmentId),
      NoiseChannelIdentity.generate(),
    ),
  );
}

/**
 * Starts a direct-Noise executor inside this process on loopback and reaches it through the
 * full client stack: Noise handshake, encrypted relay frames, JSON-RPC, session.
 */
async function startEmbeddedEndpoint(): Promise<Endpoint> {
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

/** Where a command goes: a ws:// executor, a registry's environment, an embedded executor, or an environment of the user's Codex setup. */
export type EndpointTarget =
  | { readonly kind: 'url'; readonly url: string; readonly token?: string }
  | {
      readonly kind: 'registry';
      readonly registryUrl: string;
      readonly environmentId: string;
      readonly token: string;
    }
  | { readonly kind: 'embedded' }
  | { readonly kind: 'configured'; readonly environmentId: string };

/** Opens the endpoint `target` names; `command` names the subcommand in usage errors. */
export function openEndpoint(target: EndpointTarget, command: string): Promise<Endpoint> {
  switch (target.kind) {
    case 'url':
      return Promise.resolve(remoteEndpoint(target.url, target.token));
    case 'registry':
      return Promise.resolve(
        registryEndpoint(target.registryUrl, target.environmentId, target.token),
      );
    case 'embedded':
      return startEmbeddedEndpoint();
    case 'configured':
      return Promise.resolve(configuredEndpoint(target.environmentId, command));
  }
}
