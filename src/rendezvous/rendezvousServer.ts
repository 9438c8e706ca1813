/**
 * A self-hostable environment registry + rendezvous relay on one HTTP port (noise-relay.md
 * §1, §6): the registry endpoints under `/cloud/environment/{id}/…` and the WebSocket relay
 * under `/ws/environment/{id}`. Executors (`codex exec-server --remote <url>` or ours)
 * register and attach; harnesses get connect bundles and reach them through the relay. The
 * relay never sees plaintext: confidentiality and authentication are the Noise channel's.
 *
 * ```ts
 * const rendezvous = await startRendezvous({ listen: 'http://127.0.0.1:0', executorToken });
 * // codex exec-server --remote ${rendezvous.url} --environment-id my-env   (CODEX_API_KEY=executorToken)
 * ```
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type Server, STATUS_CODES, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Observable, type SchedulerLike, Subject, asyncScheduler } from 'rxjs';
import { WebSocketServer } from 'ws';
import type { NoiseChannelPublicKeyJson } from '../noise/index.js';
import {
  MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
  WEBSOCKET_KEEPALIVE_INTERVAL_MS,
  WEBSOCKET_PONG_TIMEOUT_MS,
} from '../relay/index.js';
import { EnvironmentRelay } from './environmentRelay.js';
import {
  type HarnessAuthorizationRejection,
  checkHarnessAuthorization,
  issueHarnessAuthorization,
} from './harnessAuthorization.js';
import { registryRequestHandler } from './registryEndpoints.js';
import {
  type RendezvousCounters,
  type RendezvousEvent,
  countEvent,
  emptyCounters,
} from './rendezvousEvents.js';
import { signRendezvousUrl, verifyRendezvousUrl } from './rendezvousUrl.js';

export interface RendezvousOptions {
  /** `http://HOST:PORT` to listen on; port 0 picks a free one. Default `http://127.0.0.1:0`. */
  readonly listen?: string;
  /** Bearer token executors present on `/register` and `/validate` (codex: `CODEX_API_KEY`). */
  readonly executorToken: string;
  /** Bearer token harnesses present on `/connect`; default `executorToken`. */
  readonly harnessToken?: string;
  /**
   * Base URL clients reach this server at, when it differs from `listen` (a TLS proxy in
   * front: `https://relay.example.com`). Rendezvous URLs use its host with ws:/wss:.
   */
  readonly publicUrl?: string;
  /** HMAC key for authorizations and URL signatures; default 32 random bytes per process. */
  readonly secret?: Uint8Array;
  /** Lifetime of a harness key authorization. Default 120 000 ms. */
  readonly authorizationTtlMs?: number;
  /** Ping cadence / Pong deadline on every relay socket. Default 30 000 / 60 000 ms. */
  readonly keepalive?: { readonly pingIntervalMs: number; readonly pongTimeoutMs: number };
  /** Streams routed at once per environment. Default 128 (codex's executor limit). */
  readonly maxStreamsPerEnvironment?: number;
  /** Bytes queued on one socket before back-pressure applies. Default 8 MiB. */
  readonly maxBufferedBytes?: number;
  /**
   * A harness that reads nothing for this long while the executor waits on it is dropped
   * (its streams reset). Keep it below the Pong timeout. Default 30 000 ms.
   */
  readonly harnessStallTimeoutMs?: number;
  /** Clock for authorization expiry; scheduler for keepalives and stall timeouts. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/** What the rendezvous knows about one environment. */
export interface RendezvousEnvironmentStatus {
  readonly environmentId: string;
  readonly registrationId: string;
  readonly executorPublicKey: NoiseChannelPublicKeyJson;
  /** Registration id of the attached executor socket, if one is attached. */
  readonly attachedRegistrationId: string | undefined;
  readonly streams: number;
  readonly harnessSockets: number;
}

export interface Rendezvous {
  /** Registry base URL (`http://127.0.0.1:PORT`): `--remote` for executors, `baseUrl` for clients. */
  readonly url: string;
  /** Every routing/registry event, hot (subscribe before the action you want to see). */
  readonly events: Observable<RendezvousEvent>;
  /** Running totals of the events so far. */
  counters(): Readonly<RendezvousCounters>;
  /** What the rendezvous knows about one environment, or undefined if it never registered. */
  environment(environmentId: string): RendezvousEnvironmentStatus | undefined;
  /**
   * Mints an authorization for `harnessPublicKey` on the environment's current registration,
   * expiring at `expiresAtMs` (scheduler clock). For operators and tests; `/connect` does
   * the same with the configured TTL.
   */
  issueAuthorization(
    environmentId: string,
    harnessPublicKey: NoiseChannelPublicKeyJson,
    expiresAtMs: number,
  ): string;
  /** Closes every socket and the listener. */
  close(): Promise<void>;
}

interface EnvironmentRecord {
  registrationId: string;
  executorPublicKey: NoiseChannelPublicKeyJson;
  readonly relay: EnvironmentRelay;
}

export const DEFAULT_AUTHORIZATION_TTL_MS = 120_000;
const DEFAULT_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const DEFAULT_HARNESS_STALL_TIMEOUT_MS = 30_000;

export async function startRendezvous(options: RendezvousOptions): Promise<Rendezvous> {
  if (options.executorToken.trim() === '') {
    throw new RangeError('rendezvous executorToken must not be blank');
  }
  const listen = parseListenUrl(options.listen ?? 'http://127.0.0.1:0');
  const secret = options.secret ?? randomBytes(32);
  const scheduler = options.scheduler ?? asyncScheduler;
  const ttlMs = options.authorizationTtlMs ?? DEFAULT_AUTHORIZATION_TTL_MS;
  const events = new Subject<RendezvousEvent>();
  const counters = emptyCounters();
  const emit = (event: RendezvousEvent): void => {
    countEvent(counters, event);
    events.next(event);
  };
  const environments = new Map<string, EnvironmentRecord>();
  let wsBase = '';

  const relayOptions = {
    keepalive: options.keepalive ?? {
      pingIntervalMs: WEBSOCKET_KEEPALIVE_INTERVAL_MS,
      pongTimeoutMs: WEBSOCKET_PONG_TIMEOUT_MS,
    },
    scheduler,
    maxStreams: options.maxStreamsPerEnvironment ?? 128,
    maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
    stallTimeoutMs: options.harnessStallTimeoutMs ?? DEFAULT_HARNESS_STALL_TIMEOUT_MS,
    emit,
  };

  const authorize = (
    environmentId: string,
    record: EnvironmentRecord,
    harnessPublicKey: NoiseChannelPublicKeyJson,
    expiresAtMs: number,
  ): string =>
    issueHarnessAuthorization(
      secret,
      { environmentId, executorRegistrationId: record.registrationId, harnessPublicKey },
      expiresAtMs,
    );

  const handler = registryRequestHandler({
    executorToken: options.executorToken,
    harnessToken: options.harnessToken ?? options.executorToken,
    register(environmentId, executorPublicKey) {
      const registrationId = randomUUID();
      let record = environments.get(environmentId);
      if (record) {
        // Last registration wins: a reconnecting (or restarted) executor replaces the old one.
        record.relay.detachExecutor('superseded');
        record.registrationId = registrationId;
        record.executorPublicKey = executorPublicKey;
      } else {
        record = {
          registrationId,
          executorPublicKey,
          relay: new EnvironmentRelay(environmentId, relayOptions),
        };
        environments.set(environmentId, record);
      }
      emit({ type: 'registered', environmentId, registrationId });
      const url = signRendezvousUrl(wsBase, secret, {
        role: 'environment',
        environmentId,
        registrationId,
      });
      return { registrationId, url };
    },
    connect(environmentId, harnessPublicKey) {
      const record = environments.get(environmentId);
      if (!record) return undefined;
      if (record.relay.attachedRegistrationId !== record.registrationId) return 'offline';
      return {
        registrationId: record.registrationId,
        url: signRendezvousUrl(wsBase, secret, {
          role: 'harness',
          environmentId,
          registrationId: record.registrationId,
        }),
        executorPublicKey: record.executorPublicKey,
        authorization: authorize(environmentId, record, harnessPublicKey, scheduler.now() + ttlMs),
      };
    },
    validate(environmentId, request, streamId) {
      const record = environments.get(environmentId);
      if (!record) return undefined;
      const report = (
        valid: boolean,
        rejection?: HarnessAuthorizationRejection | 'stale_registration',
      ): boolean => {
        emit({
          type: 'validated',
          environmentId,
          ...(streamId === undefined ? {} : { streamId }),
          valid,
          ...(rejection === undefined ? {} : { rejection }),
        });
        return valid;
      };
      if (request.executor_registration_id !== record.registrationId) {
        return report(false, 'stale_registration');
      }
      const check = checkHarnessAuthorization(
        secret,
        {
          environmentId,
          executorRegistrationId: record.registrationId,
          harnessPublicKey: request.harness_public_key,
        },
        request.harness_key_authorization,
        scheduler.now(),
      );
      return check.valid ? report(true) : report(false, check.reason);
    },
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
    perMessageDeflate: false,
  });
  const server: Server = createServer(handler);
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  server.on('upgrade', (request, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    const parsed = verifyRendezvousUrl(request.url ?? '', secret);
    if (!parsed.ok) {
      const status = parsed.problem === 'not_found' ? 404 : 401;
      refuseUpgrade(socket, status, parsed.problem, 'rendezvous URL is unknown or not signed');
      emit({ type: 'upgrade-refused', status, detail: parsed.problem });
      return;
    }
    const { role, environmentId, registrationId } = parsed.claims;
    const current = (): EnvironmentRecord | undefined => {
      const record = environments.get(environmentId);
      return record?.registrationId === registrationId ? record : undefined;
    };
    const record = current();
    if (!record) {
      // Superseded or unknown: the executor re-registers on a 4xx.
      refuseUpgrade(socket, 404, 'registration_not_found', 'registration is not current');
      emit({ type: 'upgrade-refused', environmentId, status: 404, detail: 'stale registration' });
      return;
    }
    if (role === 'harness' && record.relay.attachedRegistrationId !== registrationId) {
      refuseUpgrade(socket, 409, 'environment_offline', 'no executor connected; retry later');
      emit({ type: 'upgrade-refused', environmentId, status: 409, detail: 'executor offline' });
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      const live = current();
      if (!live) {
        ws.close(4000, 'rendezvous: registration superseded');
        return;
      }
      if (role === 'environment') live.relay.attachExecutor(ws, registrationId);
      else live.relay.attachHarness(ws);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.hostname, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = options.publicUrl?.replace(/\/+$/, '') ?? `http://${host}:${address.port}`;
  wsBase = url.replace(/^http/, 'ws');

  let closing: Promise<void> | undefined;
  return {
    url,
    events: events.asObservable(),
    counters: () => ({ ...counters }),
    environment(environmentId) {
      const record = environments.get(environmentId);
      if (!record) return undefined;
      return {
        environmentId,
        registrationId: record.registrationId,
        executorPublicKey: record.executorPublicKey,
        attachedRegistrationId: record.relay.attachedRegistrationId,
        streams: record.relay.streamCount,
        harnessSockets: record.relay.harnessCount,
      };
    },
    issueAuthorization(environmentId, harnessPublicKey, expiresAtMs) {
      const record = environments.get(environmentId);
      if (!record) throw new RangeError(`environment \`${environmentId}\` is not registered`);
      return authorize(environmentId, record, harnessPublicKey, expiresAtMs);
    },
    close() {
      closing ??= (async () => {
        for (const record of environments.values()) record.relay.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        for (const client of wss.clients) client.terminate();
        wss.close();
        await closed;
        events.complete();
      })();
      return closing;
    },
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

function refuseUpgrade(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Connection: close\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
