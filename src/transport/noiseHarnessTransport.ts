/**
 * The Noise harness transport (noise-relay.md §6.4, §5): one rendezvous WebSocket carrying one
 * virtual stream to an executor. The harness is the Noise initiator; after the handshake every
 * JSON-RPC text travels as length-prefixed, 61440-byte, AES-256-GCM records in `data` frames.
 *
 * ```ts
 * connectNoiseHarness(bundle, identity).pipe(
 *   switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'me' })),
 * );
 * ```
 *
 * The established stream (records in, records out, teardown) is noiseHarnessConnection.ts.
 */
import { asyncScheduler, Observable, Subject, Subscription, timer, type SchedulerLike } from 'rxjs';
import {
  initiatorHandshake,
  NoiseChannelError,
  NoiseChannelPublicKey,
  NoiseHandshakeError,
  platformCryptoProvider,
  prologue,
  type NoiseChannelIdentity,
  type NoiseCryptoProvider,
  type NoiseInitiatorHandshake,
} from '../noise/index.js';
import { ConnectError, DisconnectedError, TimeoutError } from '../protocol/errors.js';
import {
  decodeRelayFrame,
  handshakeFrame,
  keepalive,
  MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
  resumeFrame,
  WEBSOCKET_KEEPALIVE_INTERVAL_MS,
  WEBSOCKET_PONG_TIMEOUT_MS,
  type RelayFrame,
} from '../relay/index.js';
import {
  platform,
  WEBSOCKET_OPEN,
  type PlatformWebSocket,
  type WebSocketData,
} from '../platform/index.js';
import type { NoiseRendezvousConnectBundle } from '../registry/index.js';
import { errorMessage } from './errorMessage.js';
import { formatDuration } from './formatDuration.js';
import {
  NoiseRelayHandshakeDisconnectedError,
  NoiseRelayStreamResetError,
} from './noiseHarnessErrors.js';
import { HarnessConnection, protocolError, toBytes } from './noiseHarnessConnection.js';
import type { Transport } from './transport.js';

/** `DEFAULT_REMOTE_EXEC_SERVER_CONNECT_TIMEOUT`: WebSocket open deadline. */
const NOISE_HARNESS_CONNECT_TIMEOUT_MS = 10_000;
/** Handshake deadline (codex bounds it by the 10 s initialize budget). */
const NOISE_HARNESS_HANDSHAKE_TIMEOUT_MS = 10_000;

/** Options of `connectNoiseHarness`: deadlines, keepalive and the crypto provider. */
export interface NoiseHarnessOptions {
  /** WebSocket open deadline, default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Deadline from socket open to the executor's handshake answer, default 10 000 ms. */
  handshakeTimeoutMs?: number;
  /**
   * WebSocket Ping cadence and Pong deadline, default 30 000 / 60 000 ms. Only where the
   * platform can send Pings (not in browsers, which only answer the rendezvous's).
   */
  keepalive?: { pingIntervalMs: number; pongTimeoutMs: number };
  /** Scheduler for every deadline and the keepalive (tests pass a TestScheduler). */
  scheduler?: SchedulerLike;
  /** Noise primitives, default `platformCryptoProvider`. */
  crypto?: NoiseCryptoProvider;
  /** Stream id to claim; default a fresh lowercase UUIDv4 (tests only). */
  streamId?: string;
}

/**
 * Cold: opens the rendezvous WebSocket from the bundle, resume + handshake on a fresh UUIDv4
 * stream id, then emits a Transport carrying decrypted JSON-RPC texts and completes.
 * Errors: `ConnectError` (socket), `TimeoutError` (connect or handshake deadline),
 * `NoiseRelayStreamResetError` (a `DisconnectedError`: the executor refused the handshake),
 * `NoiseHandshakeError` (message 2 did not authenticate), `NoiseRelayHandshakeDisconnectedError`
 * (socket ended), `NoiseRelayHarnessProtocolError` (relay broke the protocol),
 * `DisconnectedError` "failed to start Noise relay handshake: …" (unusable bundle key).
 * Unsubscribing before the Transport is emitted closes the socket.
 */
export function connectNoiseHarness(
  bundle: NoiseRendezvousConnectBundle,
  identity: NoiseChannelIdentity,
  options: NoiseHarnessOptions = {},
): Observable<Transport> {
  return new Observable<Transport>((subscriber) => {
    const scheduler = options.scheduler ?? asyncScheduler;
    const crypto = options.crypto ?? platformCryptoProvider;
    const streamId = options.streamId ?? platform.randomUUID();
    const url = bundle.websocketUrl;

    const startFailed = (error: unknown): DisconnectedError =>
      new DisconnectedError(`failed to start Noise relay handshake: ${errorMessage(error)}`, {
        cause: error,
      });
    // A bundle naming an unusable executor key fails before any socket is opened.
    let executorKey: NoiseChannelPublicKey;
    try {
      executorKey = NoiseChannelPublicKey.fromJSON(bundle.executorPublicKey);
    } catch (error) {
      subscriber.error(startFailed(error));
      return undefined;
    }

    let socket: PlatformWebSocket;
    try {
      socket = platform.openWebSocket(url, { maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE });
    } catch (error) {
      subscriber.error(connectError(url, error));
      return undefined;
    }

    // Message 1 is computed now, so it is ready when the socket opens (it is sent on `open`).
    let handshake: NoiseInitiatorHandshake;
    try {
      handshake = initiatorHandshake({
        identity,
        responderPublicKey: executorKey,
        prologue: prologue({
          environmentId: bundle.environmentId,
          executorRegistrationId: bundle.executorRegistrationId,
          streamId,
        }),
        authorization: bundle.harnessKeyAuthorization,
        crypto,
      });
    } catch (error) {
      socket.on('error', () => undefined);
      socket.terminate();
      subscriber.error(startFailed(error));
      return undefined;
    }
    // Stays attached for the socket's whole life: aborting a CONNECTING socket emits 'error'.
    socket.on('error', () => undefined);

    let phase: 'connecting' | 'handshake' | 'ready' | 'failed' = 'connecting';
    // One deadline at a time: the connect deadline, then the handshake deadline.
    let deadline: Subscription | undefined;
    let lastError: Error | undefined;

    const fail = (error: Error): void => {
      if (phase === 'ready' || phase === 'failed') return;
      phase = 'failed';
      deadline?.unsubscribe();
      keepaliveSubscription.unsubscribe();
      subscriber.error(error);
    };

    const connectMs = options.connectTimeoutMs ?? NOISE_HARNESS_CONNECT_TIMEOUT_MS;
    deadline = timer(connectMs, scheduler).subscribe(() =>
      fail(
        new TimeoutError(
          `timed out connecting to Noise relay websocket \`${redact(url)}\` after ${formatDuration(connectMs)}`,
        ),
      ),
    );

    const pongs = new Subject<void>();
    const keepaliveSubscription = new Subscription();
    const connection = new HarnessConnection(socket, streamId, pongs);

    const onUnexpectedResponse = (_request: unknown, response: { statusCode?: number }): void => {
      fail(
        new ConnectError(
          `failed to connect to Noise relay websocket \`${redact(url)}\`: HTTP ${response.statusCode ?? 'error'}`,
        ),
      );
      socket.terminate();
    };
    socket.once('unexpected-response', onUnexpectedResponse);
    socket.on('error', (error: Error) => {
      lastError = error;
      if (phase === 'connecting') fail(connectError(url, error));
    });
    socket.on('pong', () => pongs.next());

    socket.once('open', () => {
      if (phase !== 'connecting') return;
      phase = 'handshake';
      deadline?.unsubscribe();
      const handshakeMs = options.handshakeTimeoutMs ?? NOISE_HARNESS_HANDSHAKE_TIMEOUT_MS;
      deadline = timer(handshakeMs, scheduler).subscribe(() =>
        fail(
          new TimeoutError(
            `timed out waiting for the Noise relay handshake after ${formatDuration(handshakeMs)}`,
          ),
        ),
      );
      if (platform.webSocketPings) {
        keepaliveSubscription.add(
          keepalive(pongs, {
            intervalMs: options.keepalive?.pingIntervalMs ?? WEBSOCKET_KEEPALIVE_INTERVAL_MS,
            pongTimeoutMs: options.keepalive?.pongTimeoutMs ?? WEBSOCKET_PONG_TIMEOUT_MS,
            scheduler,
          }).subscribe({
            next: () => {
              // While reading is paused the Pong could not be read: skip the Ping and count
              // it as answered (spec/transport/noiseHarnessRelay.spec.ts, "reads nothing while paused").
              if (connection.paused) pongs.next();
              else if (socket.readyState === WEBSOCKET_OPEN) socket.ping();
            },
            error: (error: Error) => {
              fail(error);
              connection.fail(error);
              socket.terminate();
            },
          }),
        );
      }
      connection.write(resumeFrame(streamId, 0));
      connection.write(handshakeFrame(streamId, handshake.message1));
    });

    socket.on('message', (data: WebSocketData, isBinary: boolean) => {
      if (phase === 'ready') {
        connection.receive(data, isBinary);
        return;
      }
      if (phase !== 'handshake') return;
      if (!isBinary) {
        fail(protocolError('Noise relay expects binary protobuf frames'));
        socket.terminate();
        return;
      }
      let frame: RelayFrame;
      try {
        frame = decodeRelayFrame(toBytes(data));
      } catch (error) {
        fail(
          protocolError('Noise relay received data before handshake completion', {
            cause: error,
          }),
        );
        socket.terminate();
        return;
      }
      if (frame.streamId !== streamId) return;
      switch (frame.kind) {
        case 'handshake': {
          let channel;
          try {
            channel = handshake.finish(frame.payload);
          } catch (error) {
            fail(
              error instanceof NoiseChannelError
                ? error
                : new NoiseHandshakeError('invalid-message', errorMessage(error), {
                    cause: error,
                  }),
            );
            socket.terminate();
            return;
          }
          phase = 'ready';
          deadline?.unsubscribe();
          connection.start(channel, keepaliveSubscription);
          subscriber.next(connection.transport);
          subscriber.complete();
          return;
        }
        case 'reset':
          fail(new NoiseRelayStreamResetError(true));
          socket.terminate();
          return;
        case 'data':
          fail(protocolError('Noise relay received data before handshake completion'));
          socket.terminate();
          return;
        default:
          return; // resume, ack, heartbeat: ignored
      }
    });

    socket.on('close', (code: number, reason: Uint8Array) => {
      pongs.complete();
      if (phase === 'connecting') {
        fail(connectError(url, lastError ?? new Error(`connection closed (code ${code})`)));
      } else if (phase === 'handshake') {
        const detail =
          lastError !== undefined
            ? `Noise relay websocket failed during handshake: ${lastError.message}`
            : code === 1006
              ? 'Noise relay websocket ended during handshake'
              : `Noise relay received close frame during handshake (code ${code}${reason.length > 0 ? `, ${platform.utf8Decode(reason)}` : ''})`;
        fail(new NoiseRelayHandshakeDisconnectedError(detail, { cause: lastError }));
      } else {
        connection.closed(code, reason, lastError);
      }
    });

    return () => {
      if (phase === 'ready') return; // the Transport owns the socket now
      phase = 'failed';
      deadline?.unsubscribe();
      keepaliveSubscription.unsubscribe();
      socket.off('unexpected-response', onUnexpectedResponse);
      socket.terminate();
    };
  });
}

function connectError(url: string, error: unknown): ConnectError {
  return new ConnectError(
    `failed to connect to Noise relay websocket \`${redact(url)}\`: ${errorMessage(error)}`,
    { cause: error },
  );
}

/** Rendezvous URLs carry their credential in the query (`sig`); never print it. */
function redact(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
