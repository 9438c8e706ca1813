/**
 * What an environment connects with (spec/protocol.md §12.1): a plain WebSocket URL, or a
 * registry-backed Noise rendezvous, optionally deferred until provisioning reports ready.
 */
import type { Observable } from 'rxjs';
import type { NoiseChannelIdentity } from '../noise/identity.js';
import type { NoiseHarnessOptions } from '../transport/noiseHarnessTransport.js';
import type { Transport } from '../transport/transport.js';
import type { WebSocketTlsOptions } from '../platform/index.js';
import type {
  NoiseRendezvousConnectBundle,
  NoiseRendezvousConnectProvider,
} from '../registry/index.js';

/** A plain WebSocket exec-server (`codex exec-server --listen ws://…`). */
export interface WebSocketTransportParams {
  readonly kind: 'websocket';
  readonly url: string;
  /** WebSocket open deadline, default 10 s. */
  readonly connectTimeoutMs?: number;
  /** `initialize` budget, default 10 s. */
  readonly initializeTimeoutMs?: number;
  /** Trusted extra headers on the upgrade request (e.g. authorization). */
  readonly headers?: Readonly<Record<string, string>>;
  /** TLS settings for `wss://` (trusted CAs, client certificate, SNI), on every (re)connect. */
  readonly tls?: WebSocketTlsOptions;
  /** HTTP CONNECT proxy (`http://[user:password@]host:port`), on every (re)connect. */
  readonly proxy?: string;
}

/** Opens the encrypted harness stream a bundle describes; default `connectNoiseHarness`. */
export type NoiseHarnessConnector = (
  bundle: NoiseRendezvousConnectBundle,
  identity: NoiseChannelIdentity,
) => Observable<Transport>;

/** An executor reached through a Noise rendezvous found by a registry lookup. */
export interface NoiseTransportParams {
  readonly kind: 'noise';
  /** Hands out a fresh, single-use connect bundle per lookup. */
  readonly provider: NoiseRendezvousConnectProvider;
  /** The client's long-lived Noise key pair, kept across reconnects. */
  readonly identity: NoiseChannelIdentity;
  /** `initialize` (and handshake) budget, default 10 s. */
  readonly initializeTimeoutMs?: number;
  /** Options of the Noise harness transport: deadlines, keepalive (Ping cadence, Pong deadline), crypto. */
  readonly harness?: Omit<NoiseHarnessOptions, 'scheduler' | 'streamId'>;
  /** Replaces the Noise harness transport (custom relays, tests). */
  readonly connectHarness?: NoiseHarnessConnector;
}

/** Provisioning outcome a deferred environment waits for. */
export type ProvisioningReadiness =
  { readonly ok: true } | { readonly ok: false; readonly error: string };

/**
 * A provisioned environment: connecting first waits for `readiness$` to report; a failure
 * becomes ProvisioningFailedError, a completion without report a DisconnectedError.
 */
export interface DeferredTransportParams {
  readonly kind: 'deferred';
  readonly readiness$: Observable<ProvisioningReadiness | undefined>;
  readonly transport: WebSocketTransportParams | NoiseTransportParams;
}

/**
 * How a lazy client reaches its executor: a WebSocket URL, a Noise rendezvous through a registry,
 * or parameters decided later (provisioning).
 */
export type ExecServerTransportParams =
  WebSocketTransportParams | NoiseTransportParams | DeferredTransportParams;

/** Shorthand for `{ kind: 'websocket', url }`. */
export function webSocketUrl(
  url: string,
  options: Omit<WebSocketTransportParams, 'kind' | 'url'> = {},
): WebSocketTransportParams {
  return { kind: 'websocket', url, ...options };
}

/** Shorthand for `{ kind: 'noise', provider, identity }`. */
export function noiseRendezvous(
  provider: NoiseRendezvousConnectProvider,
  identity: NoiseChannelIdentity,
  options: Omit<NoiseTransportParams, 'kind' | 'provider' | 'identity'> = {},
): NoiseTransportParams {
  return { kind: 'noise', provider, identity, ...options };
}

/** The registry-backed Noise parameters behind `params`, if any (refresh needs them). */
export function noiseParamsOf(params: ExecServerTransportParams): NoiseTransportParams | undefined {
  if (params.kind === 'noise') return params;
  if (params.kind === 'deferred' && params.transport.kind === 'noise') return params.transport;
  return undefined;
}
