/**
 * `--remote URL --environment-id ID` mode (noise-relay.md §6.3): register the executor's static
 * key with the environment registry, attach to the rendezvous URL it returns, and serve the
 * multiplexed relay there. When the socket ends, reconnect with backoff (1 s doubling to 30 s,
 * back to 1 s after every successful attach); when the upgrade is refused with a 4xx, register
 * again (same key, new URL and registration id) first. Sessions live in one executor for the
 * process lifetime, so harnesses resume them across reconnects.
 */
import { randomUUID } from 'node:crypto';
import { asyncScheduler, firstValueFrom, timer, type SchedulerLike } from 'rxjs';
import WebSocket from 'ws';
import { NoiseChannelIdentity, type NoiseCryptoProvider } from '../../noise/index.js';
import { ConnectError } from '../../protocol/errors.js';
import {
  EnvironmentRegistryClient,
  EnvironmentRegistryConfigError,
  type EnvironmentRegistration,
} from '../../registry/index.js';
import { MAX_RELAY_WEBSOCKET_MESSAGE_SIZE } from '../../relay/index.js';
import { createExecutor, type Executor } from '../executor.js';
import { registryHarnessKeyValidator, type HarnessKeyValidator } from './harnessKeyValidator.js';
import {
  serveMultiplexedEnvironment,
  type MultiplexedEnvironmentLimits,
  type RelayDisconnectReason,
  type RelayEnvironmentEvent,
} from './multiplexedEnvironment.js';

/**
 * First delay before reconnecting to the rendezvous; doubles up to
 * `REMOTE_RECONNECT_MAX_BACKOFF_MS`.
 */
export const REMOTE_RECONNECT_INITIAL_BACKOFF_MS = 1_000;
/** Longest delay between reconnects to the rendezvous. */
export const REMOTE_RECONNECT_MAX_BACKOFF_MS = 30_000;
/** Deadline of one rendezvous WebSocket upgrade. */
const REMOTE_CONNECT_TIMEOUT_MS = 10_000;

/** Options of `startRemoteExecServer` (`execrx serve --remote`). */
export interface RemoteExecServerOptions {
  /** Registry base URL (`--remote`). */
  registryUrl: string;
  /** `--environment-id`. */
  environmentId: string;
  /** Bearer token for the registry; default `CODEX_API_KEY` from the environment. */
  apiKey?: string;
  chatgptAccountId?: string;
  /** Process-lifetime static identity; default a fresh one. */
  identity?: NoiseChannelIdentity;
  /** Default a new `createExecutor()`, shut down by `close()`. */
  executor?: Executor;
  /** Replaces the registry `/validate` check (tests, custom authorities). */
  validator?: (registration: EnvironmentRegistration) => HarnessKeyValidator;
  backoff?: { initialMs?: number; maxMs?: number };
  keepalive?: { pingIntervalMs: number; pongTimeoutMs: number };
  limits?: Partial<MultiplexedEnvironmentLimits>;
  crypto?: NoiseCryptoProvider;
  scheduler?: SchedulerLike;
  /** The `fetch` the registry client uses; default the global one. */
  fetch?: typeof fetch;
  /** Called with each lifecycle event; an observer that throws is ignored. */
  onEvent?: (event: RemoteEnvironmentEvent) => void;
}

/** Lifecycle of the remote mode, for logs and tests. Never carries secrets or URLs' queries. */
export type RemoteEnvironmentEvent =
  | { readonly kind: 'registered'; readonly registrationId: string }
  | { readonly kind: 'registration-failed'; readonly error: Error }
  | { readonly kind: 'connected'; readonly registrationId: string }
  | { readonly kind: 'connect-failed'; readonly error: Error; readonly status?: number }
  | { readonly kind: 'disconnected'; readonly reason: RelayDisconnectReason }
  | { readonly kind: 'retrying'; readonly delayMs: number }
  | { readonly kind: 'relay'; readonly event: RelayEnvironmentEvent };

/**
 * An executor registered with a registry and serving through its rendezvous, reconnecting until
 * `close()`.
 */
export interface RemoteExecServer {
  readonly identity: NoiseChannelIdentity;
  readonly executor: Executor;
  /** The registration currently in use. */
  readonly registration: EnvironmentRegistration;
  /** Stops reconnecting, ends the relay (`local_shutdown`), shuts down an owned executor. */
  close(): Promise<void>;
}

/** The rendezvous refused the upgrade with this HTTP status. */
class UpgradeRejectedError extends ConnectError {
  constructor(
    readonly status: number,
    url: string,
  ) {
    super(`rendezvous refused the relay websocket \`${redact(url)}\` with HTTP ${status}`);
  }
}

/**
 * Registers, then serves the relay in the background until `close()`. Rejects when the first
 * registration fails (bad configuration, bad credentials, registry down): nothing can work
 * without it. Later failures are retried forever.
 */
export async function startRemoteExecServer(
  options: RemoteExecServerOptions,
): Promise<RemoteExecServer> {
  const apiKey = options.apiKey ?? process.env.CODEX_API_KEY ?? '';
  if (apiKey.trim() === '') {
    throw new EnvironmentRegistryConfigError(
      'remote exec-server registration needs an API key (set CODEX_API_KEY)',
    );
  }
  const scheduler = options.scheduler ?? asyncScheduler;
  const registry = new EnvironmentRegistryClient({
    baseUrl: options.registryUrl,
    bearerToken: apiKey,
    ...(options.chatgptAccountId ? { chatgptAccountId: options.chatgptAccountId } : {}),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const identity = options.identity ?? NoiseChannelIdentity.generate();
  const emit = (event: RemoteEnvironmentEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // Observers never break the loop.
    }
  };
  const register = async (): Promise<EnvironmentRegistration> => {
    const registration = await firstValueFrom(
      registry.register(options.environmentId, identity.toJSON()),
    );
    emit({ kind: 'registered', registrationId: registration.executorRegistrationId });
    return registration;
  };

  let registration = await register();
  const ownsExecutor = options.executor === undefined;
  const executor = options.executor ?? createExecutor();
  const shutdown = new AbortController();
  const initialBackoff = options.backoff?.initialMs ?? REMOTE_RECONNECT_INITIAL_BACKOFF_MS;
  const maxBackoff = options.backoff?.maxMs ?? REMOTE_RECONNECT_MAX_BACKOFF_MS;

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (shutdown.signal.aborted) return resolve();
      const subscription = timer(ms, scheduler).subscribe(() => {
        shutdown.signal.removeEventListener('abort', wake);
        resolve();
      });
      const wake = (): void => {
        subscription.unsubscribe();
        resolve();
      };
      shutdown.signal.addEventListener('abort', wake, { once: true });
    });

  const loop = (async () => {
    let backoff = initialBackoff;
    let mustRegister = false;
    while (!shutdown.signal.aborted) {
      if (mustRegister) {
        try {
          registration = await register();
          mustRegister = false;
        } catch (error) {
          emit({ kind: 'registration-failed', error: asError(error) });
        }
      }
      let socket: WebSocket | undefined;
      if (!mustRegister) {
        try {
          socket = await openRelaySocket(registration.websocketUrl, shutdown.signal);
        } catch (error) {
          const status = error instanceof UpgradeRejectedError ? error.status : undefined;
          emit({
            kind: 'connect-failed',
            error: asError(error),
            ...(status === undefined ? {} : { status }),
          });
          // A 4xx means the URL (or its signature) is no longer valid: register again.
          if (status !== undefined && status >= 400 && status < 500) mustRegister = true;
        }
      }
      if (socket) {
        backoff = initialBackoff;
        emit({ kind: 'connected', registrationId: registration.executorRegistrationId });
        const current = registration;
        const reason = await serveMultiplexedEnvironment(socket, {
          executor,
          environmentId: current.environmentId,
          registrationId: current.executorRegistrationId,
          identity,
          validator: options.validator
            ? options.validator(current)
            : registryHarnessKeyValidator(
                registry,
                current.executorRegistrationId,
                options.environmentId,
              ),
          signal: shutdown.signal,
          scheduler,
          onEvent: (event) => emit({ kind: 'relay', event }),
          ...(options.keepalive ? { keepalive: options.keepalive } : {}),
          ...(options.limits ? { limits: options.limits } : {}),
          ...(options.crypto ? { crypto: options.crypto } : {}),
        });
        emit({ kind: 'disconnected', reason });
      }
      if (shutdown.signal.aborted) break;
      emit({ kind: 'retrying', delayMs: backoff });
      await sleep(backoff);
      backoff = Math.min(backoff * 2, maxBackoff);
    }
  })();

  let closing: Promise<void> | undefined;
  return {
    identity,
    executor,
    get registration() {
      return registration;
    },
    close() {
      closing ??= (async () => {
        shutdown.abort();
        await loop;
        if (ownsExecutor) await executor.shutdown();
      })();
      return closing;
    },
  };
}

/** Opens the rendezvous socket (`role=environment`), 256 KiB frames, TCP_NODELAY (ws default). */
function openRelaySocket(url: string, signal: AbortSignal): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, {
        perMessageDeflate: false,
        maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
        handshakeTimeout: REMOTE_CONNECT_TIMEOUT_MS,
        headers: { 'x-request-id': randomUUID() },
      });
    } catch (error) {
      reject(asError(error));
      return;
    }
    const onAbort = (): void => socket.terminate();
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => {
      signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners('open');
      socket.removeAllListeners('unexpected-response');
    };
    socket.on('error', (error: Error) => {
      settle();
      reject(
        new ConnectError(
          `failed to connect to rendezvous websocket \`${redact(url)}\`: ${error.message}`,
          { cause: error },
        ),
      );
    });
    socket.once('unexpected-response', (request, response) => {
      settle();
      const status = response.statusCode ?? 0;
      response.resume();
      void request;
      socket.on('error', () => undefined);
      socket.terminate();
      reject(new UpgradeRejectedError(status, url));
    });
    socket.once('open', () => {
      settle();
      socket.removeAllListeners('error');
      socket.on('error', () => undefined); // the relay loop reports errors from here on
      resolve(socket);
    });
  });
}

function redact(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
