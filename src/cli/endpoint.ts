/**
 * Where `execrx run` sends its requests: an executor at a ws:// URL, one found through a
 * registry (Noise rendezvous), one embedded in this process (direct Noise over loopback), or
 * an environment of the user's Codex setup. An endpoint opens the environment layer's session
 * owner and owns what it started; the lifecycle (connect, resume after loss, give up) is the
 * environment layer's.
 *
 * openEndpoint.ts opens the kind a target names, each from its own module, loaded when
 * chosen: the bundled CLI (scripts/bundle-cli.mjs) then loads the executor only for an
 * embedded or local one, and the registry's HTTP client only for a registry.
 */
import type { Observable } from 'rxjs';
import type { ExecServerClient } from '../client/index.js';
import { LazyRemoteExecServerClient } from '../environment/lazyRemoteClient.js';
import { webSocketUrl, type ExecServerTransportParams } from '../environment/transportParams.js';
import { bearerAuthorization } from '../transport/webSocketTransport.js';

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
export function paramsEndpoint(
  label: string,
  params: ExecServerTransportParams,
  close: () => Promise<void> = async () => undefined,
): Endpoint {
  return { label, open: () => new LazyRemoteExecServerClient(params), close };
}

/** An executor somewhere else, reached over plain WebSocket (with a bearer token for `--ws-auth`). */
export function remoteEndpoint(url: string, bearerToken?: string): Endpoint {
  const options = bearerToken === undefined ? {} : { headers: bearerAuthorization(bearerToken) };
  return paramsEndpoint(url, webSocketUrl(url, options));
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
