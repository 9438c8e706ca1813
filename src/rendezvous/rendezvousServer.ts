/**
 * A self-hostable environment registry + rendezvous relay on one HTTP port (noise-relay.md
 * §1, §6): the registry endpoints under `/cloud/environment/{id}/…` and the WebSocket relay
 * under `/ws/environment/{id}`. Executors (`codex exec-server --remote <url>` or ours)
 * register and attach; harnesses get connect bundles and reach them through the relay. The
 * relay never sees plaintext: confidentiality and authentication are the Noise channel's.
 *
 * One process is one node. Registrations live in a `RendezvousStore` (in memory by default;
 * Redis for a cluster, docs/rendezvous-cluster.md); relay sockets live in the node that
 * accepted the executor's socket, and `/connect` on any node signs a harness URL for that
 * node. A node that gets an executor socket for a registration another live node holds
 * answers 404, so the executor registers again (what codex does on a 4xx).
 *
 * ```ts
 * const rendezvous = await startRendezvous({ listen: 'http://127.0.0.1:0', executorToken });
 * // codex exec-server --remote ${rendezvous.url} --environment-id my-env   (CODEX_API_KEY=executorToken)
 * ```
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type Observable, type SchedulerLike, Subject, asyncScheduler } from 'rxjs';
import type { NoiseChannelPublicKeyJson } from '../noise/index.js';
import { WEBSOCKET_KEEPALIVE_INTERVAL_MS, WEBSOCKET_PONG_TIMEOUT_MS } from '../relay/index.js';
import { issueHarnessAuthorization } from './harnessAuthorization.js';
import { registryRequestHandler } from './registryEndpoints.js';
import { registryBackend } from './registryBackend.js';
import { relayUpgradeHandler } from './relayUpgrade.js';
import {
  type RendezvousCounters,
  type RendezvousEvent,
  countEvent,
  emptyCounters,
} from './rendezvousEvents.js';
import { type RendezvousStore, memoryRendezvousStore } from './rendezvousStore.js';
import { type RendezvousTokens, type TokenPair, checkTokens } from './trust.js';
import type { RendezvousNodeContext } from './nodeContext.js';

export interface RendezvousOptions {
  /** `http://HOST:PORT` to listen on; port 0 picks a free one. Default `http://127.0.0.1:0`. */
  readonly listen?: string;
  /** Bearer token executors present on `/register` and `/validate` (codex: `CODEX_API_KEY`). */
  readonly executorToken: string;
  /**
   * Bearer token harnesses present on `/connect`; must differ from every executor token.
   * Default: a random one (`Rendezvous.harnessToken`).
   */
  readonly harnessToken?: string;
  /** Environments with their own token pair: only that pair opens them. */
  readonly environmentTokens?: ReadonlyMap<string, TokenPair>;
  /**
   * Base URL executors reach the rendezvous at, when it differs from `listen`: a TLS proxy,
   * or the one front address of a cluster. Executor URLs use it; harness URLs use
   * `advertiseUrl` (which defaults to it).
   */
  readonly publicUrl?: string;
  /** Base URL harnesses reach this node at. Default `publicUrl`, or with a `store` the bound address. */
  readonly advertiseUrl?: string;
  /** Shared state; default an in-memory store (one node). */
  readonly store?: RendezvousStore;
  /** This node's id in the store; default a random UUID. */
  readonly nodeId?: string;
  /** HMAC key for authorizations and URL signatures; default the store's (32 random bytes). */
  readonly secret?: Uint8Array;
  /** Lifetime of a harness key authorization and of a harness URL. Default 120 000 ms. */
  readonly authorizationTtlMs?: number;
  /** Lifetime of an executor's rendezvous URL (past it, the executor registers again). Default 24 h. */
  readonly environmentUrlTtlMs?: number;
  /** A registration with no executor attached expires after this long. Default 10 min. */
  readonly registrationTtlMs?: number;
  /** Node heartbeat cadence; a node is gone after three missed beats. Default 1 000 ms. */
  readonly heartbeatIntervalMs?: number;
  /** Ping cadence / Pong deadline on every relay socket. Default 30 000 / 60 000 ms. */
  readonly keepalive?: { readonly pingIntervalMs: number; readonly pongTimeoutMs: number };
  /** Streams routed at once per environment. Default 128 (codex's executor limit). */
  readonly maxStreamsPerEnvironment?: number;
  /** Streams one harness socket may hold. Default 32. */
  readonly maxStreamsPerHarnessSocket?: number;
  /** Harness sockets per environment on one node. Default 64. */
  readonly maxHarnessSocketsPerEnvironment?: number;
  /** Live registrations one executor token may hold. Default 1 000. */
  readonly maxEnvironmentsPerToken?: number;
  /** Bytes queued on one socket before back-pressure applies. Default 8 MiB. */
  readonly maxBufferedBytes?: number;
  /**
   * A harness that reads nothing for this long while the executor waits on it is dropped
   * (its streams reset). Keep it below the Pong timeout. Default 30 000 ms.
   */
  readonly harnessStallTimeoutMs?: number;
  /** Origins (`https://app.example.com`) browser clients may use `/connect` and harness sockets from. */
  readonly allowOrigins?: readonly string[];
  /** Clock for expiries; scheduler for keepalives and stall timeouts. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/** What the rendezvous knows about one environment. */
export interface RendezvousEnvironmentStatus {
  readonly environmentId: string;
  readonly registrationId: string;
  readonly executorPublicKey: NoiseChannelPublicKeyJson;
  /** Registration id of the executor socket attached to this node, if one is. */
  readonly attachedRegistrationId: string | undefined;
  readonly streams: number;
  readonly harnessSockets: number;
}

export interface Rendezvous {
  /** Registry base URL (`http://127.0.0.1:PORT`): `--remote` for executors, `baseUrl` for clients. */
  readonly url: string;
  /** The token harnesses present on `/connect` (when not per environment). */
  readonly harnessToken: string;
  readonly nodeId: string;
  /** Every routing/registry event, hot (subscribe before the action you want to see). */
  readonly events: Observable<RendezvousEvent>;
  /** Running totals of the events so far. */
  counters(): Readonly<RendezvousCounters>;
  /** What the rendezvous knows about one environment, or undefined if it never registered. */
  environment(environmentId: string): Promise<RendezvousEnvironmentStatus | undefined>;
  /**
   * Mints an authorization for `harnessPublicKey` on the environment's current registration,
   * expiring at `expiresAtMs` (scheduler clock). For operators and tests; `/connect` does
   * the same with the configured TTL.
   */
  issueAuthorization(
    environmentId: string,
    harnessPublicKey: NoiseChannelPublicKeyJson,
    expiresAtMs: number,
  ): Promise<string>;
  /**
   * Operator deletion: forgets the environment's registration (and its key binding) and
   * closes its executor socket here; the executor's next attach answers 404, so it registers
   * again. False when the environment is not registered.
   */
  evict(environmentId: string): Promise<boolean>;
  /**
   * Leaves the cluster: refuses new connections, closes executor sockets (1001, so executors
   * reconnect through the front address to another node) and harness sockets, and closes
   * once every socket is gone or after `deadlineMs`.
   */
  drain(deadlineMs?: number): Promise<void>;
  /** Closes every socket and the listener. */
  close(): Promise<void>;
}

export const DEFAULT_AUTHORIZATION_TTL_MS = 120_000;
const DEFAULT_ENVIRONMENT_URL_TTL_MS = 24 * 60 * 60_000;
const DEFAULT_REGISTRATION_TTL_MS = 10 * 60_000;
const DEFAULT_HEARTBEAT_INTERVAL_MS = 1_000;
const DEFAULT_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const DEFAULT_HARNESS_STALL_TIMEOUT_MS = 30_000;
const DEFAULT_DRAIN_DEADLINE_MS = 10_000;

export async function startRendezvous(options: RendezvousOptions): Promise<Rendezvous> {
  const tokens: RendezvousTokens = {
    shared: {
      executor: options.executorToken,
      harness: options.harnessToken ?? randomBytes(24).toString('base64url'),
    },
    ...(options.environmentTokens ? { perEnvironment: options.environmentTokens } : {}),
  };
  checkTokens(tokens);
  const listen = parseListenUrl(options.listen ?? 'http://127.0.0.1:0');
  const scheduler = options.scheduler ?? asyncScheduler;
  const store = options.store ?? memoryRendezvousStore();
  const secret = await store.secret(options.secret ?? randomBytes(32));
  const events = new Subject<RendezvousEvent>();
  const counters = emptyCounters();
  const emit = (event: RendezvousEvent): void => {
    countEvent(counters, event);
    events.next(event);
  };
  const heartbeatMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  const node: RendezvousNodeContext = {
    nodeId: options.nodeId ?? randomUUID(),
    store,
    secret,
    tokens,
    scheduler,
    emit,
    relays: new Map(),
    holdings: new Map(),
    state: { draining: false, publicWsBase: '', advertisedUrl: '' },
    limits: {
      authorizationTtlMs: options.authorizationTtlMs ?? DEFAULT_AUTHORIZATION_TTL_MS,
      environmentUrlTtlMs: options.environmentUrlTtlMs ?? DEFAULT_ENVIRONMENT_URL_TTL_MS,
      registrationTtlMs: options.registrationTtlMs ?? DEFAULT_REGISTRATION_TTL_MS,
      nodeTtlMs: 3 * heartbeatMs,
      tombstoneMs: Math.max(30 * heartbeatMs, 30_000),
      maxHarnessSocketsPerEnvironment: options.maxHarnessSocketsPerEnvironment ?? 64,
      maxEnvironmentsPerToken: options.maxEnvironmentsPerToken ?? 1_000,
    },
    allowedOrigins: new Set(options.allowOrigins ?? []),
    relayOptions: {
      keepalive: options.keepalive ?? {
        pingIntervalMs: WEBSOCKET_KEEPALIVE_INTERVAL_MS,
        pongTimeoutMs: WEBSOCKET_PONG_TIMEOUT_MS,
      },
      scheduler,
      maxStreams: options.maxStreamsPerEnvironment ?? 128,
      maxStreamsPerHarness: options.maxStreamsPerHarnessSocket ?? 32,
      maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
      stallTimeoutMs: options.harnessStallTimeoutMs ?? DEFAULT_HARNESS_STALL_TIMEOUT_MS,
      emit: (event) => {
        // The store follows the sockets: a detached executor frees its registration's holder.
        if (event.type === 'executor-detached') {
          const { nodeId, limits } = node;
          if (node.holdings.get(event.environmentId)?.registrationId === event.registrationId) {
            node.holdings.delete(event.environmentId);
          }
          store
            .detach(
              event.environmentId,
              event.registrationId,
              nodeId,
              scheduler.now(),
              limits.registrationTtlMs,
            )
            .catch((error: unknown) => reportStoreError(error));
        }
        emit(event);
      },
    },
  };
  const reportStoreError = (error: unknown): void =>
    emit({ type: 'store-failed', detail: error instanceof Error ? error.message : String(error) });

  const server: Server = createServer(registryRequestHandler(registryBackend(node)));
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const upgrades = relayUpgradeHandler(node);
  server.on('upgrade', upgrades.handle);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.hostname, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const bound = `http://${host}:${address.port}`;
  const url = options.publicUrl?.replace(/\/+$/, '') ?? bound;
  node.state.publicWsBase = url.replace(/^http/, 'ws');
  // In a cluster (a shared store) harnesses must reach this very node, not the front address.
  node.state.advertisedUrl =
    options.advertiseUrl?.replace(/\/+$/, '') ?? (options.store ? bound : url);

  const beat = async (): Promise<void> => {
    const now = scheduler.now();
    // SET NX: after a store restart, the first node back puts the cluster's secret again.
    await store.secret(secret);
    await store.heartbeat(
      { id: node.nodeId, url: node.state.advertisedUrl, draining: node.state.draining },
      now,
      node.limits.nodeTtlMs,
    );
    const held = new Map<string, string>();
    for (const [environmentId, relay] of node.relays) {
      const registrationId = relay.attachedRegistrationId;
      if (registrationId !== undefined) held.set(environmentId, registrationId);
      else if (relay.idle) node.relays.delete(environmentId);
    }
    const lost = await store.refresh(held, node.nodeId, now, node.limits.registrationTtlMs);
    for (const environmentId of lost) await letGoOrRestore(environmentId, now);
  };
  /**
   * A registration this node holds is gone from the store or changed. Replaced, deleted or
   * taken over: close the executor socket. Missing altogether (the store restarted empty):
   * put it back, so neither the executor nor its clients notice.
   */
  const letGoOrRestore = async (environmentId: string, now: number): Promise<void> => {
    const relay = node.relays.get(environmentId);
    const holding = node.holdings.get(environmentId);
    if (
      holding !== undefined &&
      relay?.attachedRegistrationId === holding.registrationId &&
      (await store.get(environmentId, now)) === undefined &&
      (await store.restore(holding, node.nodeId, now, node.limits.registrationTtlMs))
    ) {
      emit({
        type: 'registration-restored',
        environmentId,
        registrationId: holding.registrationId,
      });
      return;
    }
    relay?.detachExecutor('superseded');
  };
  await beat();
  let beating = false;
  const heartbeat = setInterval(() => {
    if (beating) return;
    beating = true;
    beat()
      .catch(reportStoreError)
      .finally(() => (beating = false));
  }, heartbeatMs);
  heartbeat.unref();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(heartbeat);
      for (const relay of node.relays.values()) relay.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      upgrades.close();
      await closed;
      await store.leave(node.nodeId).catch(() => undefined);
      if (!options.store) await store.close();
      events.complete();
    })();
    return closing;
  };

  return {
    url,
    harnessToken: tokens.shared.harness,
    nodeId: node.nodeId,
    events: events.asObservable(),
    counters: () => ({ ...counters }),
    async environment(environmentId) {
      const record = await store.get(environmentId, scheduler.now());
      if (!record) return undefined;
      const relay = node.relays.get(environmentId);
      return {
        environmentId,
        registrationId: record.registrationId,
        executorPublicKey: record.executorPublicKey,
        attachedRegistrationId: relay?.attachedRegistrationId,
        streams: relay?.streamCount ?? 0,
        harnessSockets: relay?.harnessCount ?? 0,
      };
    },
    async issueAuthorization(environmentId, harnessPublicKey, expiresAtMs) {
      const record = await store.get(environmentId, scheduler.now());
      if (!record) throw new RangeError(`environment \`${environmentId}\` is not registered`);
      return issueHarnessAuthorization(
        secret,
        { environmentId, executorRegistrationId: record.registrationId, harnessPublicKey },
        expiresAtMs,
      );
    },
    async evict(environmentId) {
      const record = await store.get(environmentId, scheduler.now());
      const deleted =
        record !== undefined &&
        (await store.delete(environmentId, record.registrationId, node.limits.tombstoneMs));
      if (!deleted) return false;
      node.relays.get(environmentId)?.detachExecutor('superseded');
      return true;
    },
    async drain(deadlineMs = DEFAULT_DRAIN_DEADLINE_MS) {
      if (closing) return closing;
      node.state.draining = true;
      server.close();
      server.closeIdleConnections();
      // Out of the store first: another node may take the executors over at once.
      await store.leave(node.nodeId).catch(reportStoreError);
      for (const relay of node.relays.values()) relay.close('draining');
      const deadline = Date.now() + deadlineMs;
      while (sockets.size > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await close();
    },
    close,
  };
}

function parseListenUrl(listen: string): { hostname: string; port: number } {
  let url: URL;
  try {
    url = new URL(listen);
  } catch {
    throw new RangeError(`rendezvous listen address \`${listen}\` is not a URL`);
  }
  if (url.protocol !== 'http:') {
    throw new RangeError(
      `rendezvous listen address \`${listen}\` must be http://HOST:PORT (put TLS in a proxy and set publicUrl)`,
    );
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { hostname, port: url.port === '' ? 80 : Number(url.port) };
}
