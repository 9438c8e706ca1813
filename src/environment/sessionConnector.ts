/**
 * Opening sessions for an environment (spec/protocol.md §12.2–12.3): the initial connect for
 * each kind of transport parameters, and the reconnect strategy recovery uses to reopen a
 * transport for the same session.
 */
import {
  Observable,
  asyncScheduler,
  catchError,
  defer,
  filter,
  map,
  of,
  retry,
  switchMap,
  take,
  throwError,
  throwIfEmpty,
  timeout,
  timer,
  type SchedulerLike,
} from 'rxjs';
import { randomUUID } from '../platform/index.js';
import { ExecServerClient } from '../client/execServerClient.js';
import type { NetworkPolicyHandler } from '../client/networkPolicy.js';
import type { W3cTraceContext } from '../protocol/w3cTraceContext.js';
import { NoiseChannelPublicKey } from '../noise/publicKey.js';
import { ConnectError, DisconnectedError, ProtocolError } from '../protocol/errors.js';
import { EnvironmentRegistryRequestError } from '../registry/errors.js';
import type { NoiseRendezvousConnectBundle } from '../registry/index.js';
import { isEnvironmentOfflineError, isRetryableRegistryError } from '../registry/retryable.js';
import { formatDuration } from '../transport/formatDuration.js';
import type { Transport } from '../transport/transport.js';
import { connectWebSocket } from '../transport/webSocketTransport.js';
import {
  CONNECT_TIMEOUT_MS,
  ENVIRONMENT_CLIENT_NAME,
  INITIAL_REGISTRY_MAX_RETRIES,
  INITIAL_REGISTRY_OPERATION_TIMEOUT_MS,
  INITIAL_REGISTRY_REQUEST_TIMEOUT_MS,
  INITIALIZE_TIMEOUT_MS,
  PROVISIONED_ENVIRONMENT_CONNECT_TIMEOUT_MS,
  SESSION_RECOVERY_RETRY_INTERVAL_MS,
} from './constants.js';
import { ProvisioningFailedError } from './errors.js';
import { openNoiseHarness } from './noiseHarnessConnector.js';
import { registryRecoveryRetryDelayMs } from './registryBackoff.js';
import type {
  ExecServerTransportParams,
  NoiseTransportParams,
  WebSocketTransportParams,
} from './transportParams.js';

/** One fresh physical transport for an existing session, and the registration it reached. */
export interface ReopenedTransport {
  readonly transport: Transport;
  readonly registrationId?: string;
}

/** How recovery reopens a transport for the same session (spec §12.3). */
export interface ReconnectStrategy {
  readonly kind: 'websocket' | 'noise';
  /** The executor key pinned by the first bundle (Noise only). */
  readonly executorKey?: NoiseChannelPublicKey;
  /** Cold: one reopened transport per subscription. */
  reopen(): Observable<ReopenedTransport>;
  /** Pause before retry number `attempt` (0-based). */
  retryDelayMs(sessionId: string, attempt: number): number;
}

/** A freshly initialized session and what recovery needs to keep it alive. */
export interface ConnectedSession {
  readonly client: ExecServerClient;
  readonly strategy: ReconnectStrategy;
  readonly registrationId?: string;
}

export interface ConnectOptions {
  readonly scheduler?: SchedulerLike;
  /** A bundle a refresh already looked up: used for the first connect instead of a lookup. */
  readonly prefetchedBundle?: NoiseRendezvousConnectBundle;
  /** Provisioning reported ready: `environment_offline` is retried for 5 minutes. */
  readonly provisioned?: boolean;
  /**
   * The caller's default network policy, installed on the new session (and so kept through
   * its recoveries, which resume the same session); a refresh passes it again.
   */
  readonly networkPolicy?: NetworkPolicyHandler;
  /** Deadline of each network policy request (see `ExecServerClientOptions`). */
  readonly networkPolicyTimeoutMs?: number;
  /** W3C trace context of the caller's current span, for every request (see `ExecServerClientOptions`). */
  readonly traceContext?: () => W3cTraceContext | undefined;
}

/** Cold: connects and initializes one new session (`resumeSessionId: null`). */
export function connectSession(
  params: ExecServerTransportParams,
  options: ConnectOptions = {},
): Observable<ConnectedSession> {
  switch (params.kind) {
    case 'websocket':
      return connectWebSocketSession(params, options);
    case 'noise':
      return connectNoiseSession(params, options);
    case 'deferred':
      return params.readiness$.pipe(
        filter((readiness) => readiness !== undefined),
        take(1),
        switchMap((readiness) => {
          if (!readiness.ok) return throwError(() => new ProvisioningFailedError(readiness.error));
          return connectSession(params.transport, { ...options, provisioned: true });
        }),
        throwIfEmpty(
          () =>
            new DisconnectedError(
              'environment unavailable: environment provisioning ended before completion',
            ),
        ),
      );
  }
}

function initialize(
  transport: Transport,
  initializeTimeoutMs: number | undefined,
  options: ConnectOptions,
): Observable<ExecServerClient> {
  const { scheduler, networkPolicy, networkPolicyTimeoutMs, traceContext } = options;
  return ExecServerClient.connect(transport, {
    clientName: ENVIRONMENT_CLIENT_NAME,
    recovery: true,
    initializeTimeoutMs: initializeTimeoutMs ?? INITIALIZE_TIMEOUT_MS,
    ...(scheduler ? { scheduler } : {}),
    ...(networkPolicy ? { handleNetworkPolicyRequest: networkPolicy } : {}),
    ...(networkPolicyTimeoutMs === undefined ? {} : { networkPolicyTimeoutMs }),
    ...(traceContext ? { traceContext } : {}),
  });
}

// ---------------------------------------------------------------------------------------
// Plain WebSocket

function openWebSocket(
  params: WebSocketTransportParams,
  scheduler: SchedulerLike | undefined,
): Observable<Transport> {
  return connectWebSocket(params.url, {
    connectTimeoutMs: params.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(params.headers ? { headers: { ...params.headers } } : {}),
    ...(params.tls ? { tls: params.tls } : {}),
    ...(params.proxy ? { proxy: params.proxy } : {}),
    ...(scheduler ? { scheduler } : {}),
  });
}

function connectWebSocketSession(
  params: WebSocketTransportParams,
  options: ConnectOptions,
): Observable<ConnectedSession> {
  const scheduler = options.scheduler;
  const strategy: ReconnectStrategy = {
    kind: 'websocket',
    reopen: () => openWebSocket(params, scheduler).pipe(map((transport) => ({ transport }))),
    retryDelayMs: () => SESSION_RECOVERY_RETRY_INTERVAL_MS,
  };
  return openWebSocket(params, scheduler).pipe(
    switchMap((transport) => initialize(transport, params.initializeTimeoutMs, options)),
    map((client) => ({ client, strategy })),
  );
}

// ---------------------------------------------------------------------------------------
// Noise rendezvous

/** The executor key a bundle names; a malformed key is a protocol error, not a crash. */
export function bundleExecutorKey(bundle: NoiseRendezvousConnectBundle): NoiseChannelPublicKey {
  try {
    return NoiseChannelPublicKey.fromJSON(bundle.executorPublicKey);
  } catch (error) {
    throw new ProtocolError(
      `registry returned an invalid executor public key: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/**
 * The initial lookup (spec §12.2 steps 1–3): each request bounded by 6 s, retryable registry
 * errors retried at most 4 times with registry backoff, everything within 14 s. A provisioned
 * environment also retries `environment_offline` (409) until 5 minutes after it became ready.
 */
function initialLookup(
  params: NoiseTransportParams,
  scheduler: SchedulerLike | undefined,
  provisioned: boolean,
): Observable<NoiseRendezvousConnectBundle> {
  const backoffKey = randomUUID();
  const schedulerOption = scheduler ? { scheduler } : {};
  const timedOut = (ms: number) =>
    new EnvironmentRegistryRequestError(
      'timeout',
      `registry lookup timed out after ${formatDuration(ms)}`,
    );
  let ordinaryRetries = 0;
  let offlineRetries = 0;
  let offlineSince: number | undefined;
  const now = () => (scheduler ?? asyncScheduler).now();
  return defer(() => params.provider.connectBundle(params.identity.publicKey().toJSON())).pipe(
    take(1),
    throwIfEmpty(() => new ProtocolError('registry lookup returned no connect bundle')),
    timeout({
      first: INITIAL_REGISTRY_REQUEST_TIMEOUT_MS,
      ...schedulerOption,
      with: () => throwError(() => timedOut(INITIAL_REGISTRY_REQUEST_TIMEOUT_MS)),
    }),
    retry({
      delay: (error: unknown) => {
        if (provisioned && isEnvironmentOfflineError(error)) {
          offlineSince ??= now();
          if (now() - offlineSince >= PROVISIONED_ENVIRONMENT_CONNECT_TIMEOUT_MS) {
            return throwError(() => error);
          }
          return timer(registryRecoveryRetryDelayMs(backoffKey, offlineRetries++), scheduler);
        }
        if (!isRetryableRegistryError(error) || ordinaryRetries >= INITIAL_REGISTRY_MAX_RETRIES) {
          return throwError(() => error);
        }
        return timer(registryRecoveryRetryDelayMs(backoffKey, ordinaryRetries++), scheduler);
      },
    }),
    // The 14 s window bounds ordinary retries; an offline provisioned environment has 5 min.
    timeout({
      first: provisioned
        ? PROVISIONED_ENVIRONMENT_CONNECT_TIMEOUT_MS
        : INITIAL_REGISTRY_OPERATION_TIMEOUT_MS,
      ...schedulerOption,
      with: () =>
        throwError(() =>
          timedOut(
            provisioned
              ? PROVISIONED_ENVIRONMENT_CONNECT_TIMEOUT_MS
              : INITIAL_REGISTRY_OPERATION_TIMEOUT_MS,
          ),
        ),
    }),
  );
}

function noiseStrategy(
  params: NoiseTransportParams,
  executorKey: NoiseChannelPublicKey,
  scheduler: SchedulerLike | undefined,
): ReconnectStrategy {
  return {
    kind: 'noise',
    executorKey,
    // A fresh lookup per try; a new registration id with the same key is fine (the executor
    // re-registered), another key is fatal.
    reopen: () =>
      defer(() => params.provider.connectBundle(params.identity.publicKey().toJSON())).pipe(
        take(1),
        switchMap((bundle) => {
          if (!bundleExecutorKey(bundle).equals(executorKey)) {
            throw new ProtocolError('executor key changed during session recovery');
          }
          return openNoiseHarness(params, bundle, scheduler).pipe(
            map((transport) => ({ transport, registrationId: bundle.executorRegistrationId })),
          );
        }),
      ),
    retryDelayMs: registryRecoveryRetryDelayMs,
  };
}

/** The rendezvous refused the WebSocket upgrade with HTTP 401: the bundle's grant expired. */
function isUnauthorizedUpgrade(error: unknown): boolean {
  return error instanceof ConnectError && /\bHTTP 401\b/.test(error.message);
}

function connectNoiseSession(
  params: NoiseTransportParams,
  options: ConnectOptions,
): Observable<ConnectedSession> {
  const scheduler = options.scheduler;
  // Lookup (or the refresh's bundle) and open; an HTTP 401 upgrade fetches a fresh bundle once.
  const lookupAndOpen = (
    refetched: boolean,
  ): Observable<{ transport: Transport; bundle: NoiseRendezvousConnectBundle }> =>
    (options.prefetchedBundle && !refetched
      ? of(options.prefetchedBundle)
      : initialLookup(params, scheduler, options.provisioned === true)
    ).pipe(
      switchMap((bundle) => {
        bundleExecutorKey(bundle); // a malformed key fails before any socket is opened
        return openNoiseHarness(params, bundle, scheduler).pipe(
          map((transport) => ({ transport, bundle })),
          catchError((error: unknown) =>
            !refetched && isUnauthorizedUpgrade(error)
              ? lookupAndOpen(true)
              : throwError(() => error),
          ),
        );
      }),
    );
  return lookupAndOpen(false).pipe(
    switchMap(({ transport, bundle }) =>
      initialize(transport, params.initializeTimeoutMs, options).pipe(
        map((client): ConnectedSession => ({
          client,
          strategy: noiseStrategy(params, bundleExecutorKey(bundle), scheduler),
          registrationId: bundle.executorRegistrationId,
        })),
      ),
    ),
  );
}
