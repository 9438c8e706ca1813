/**
 * The executor's side of one relay WebSocket (noise-relay.md §5.5, §6.5): many harness streams,
 * keyed by `stream_id`, each admitted by a Noise handshake plus a registry validation and then
 * served as its own exec-server connection. Sessions live in the shared `Executor`, so a harness
 * whose stream or socket dropped can resume its session on a new stream, even on another socket.
 *
 * Failure budget, as codex 0.169.0 behaves (spec README "Observed"): each counted handshake
 * failure on this socket adds one; at the 8th the socket stays up with its open streams, but
 * every new handshake is reset without asking the validator for a cooldown (~10 s); afterwards
 * the count starts again from zero. Successful handshakes never lower the count.
 *
 * Over 400 lines for one reason: streams, pending validations, the failure budget and the write
 * backlog are the state of one socket, and each event changes several of them at once.
 */
import {
  asyncScheduler,
  defaultIfEmpty,
  defer,
  Subject,
  Subscription,
  take,
  timeout,
  timer,
  type SchedulerLike,
} from 'rxjs';
import type { Duplex } from 'node:stream';
import WebSocket from 'ws';
import {
  platformCryptoProvider,
  prologue,
  responderHandshake,
  type NoiseChannelIdentity,
  type NoiseCryptoProvider,
  type NoiseResponderHandshake,
} from '../../noise/index.js';
import { DisconnectedError } from '../../protocol/errors.js';
import { HARNESS_KEY_VALIDATION_TIMEOUT_MS } from '../../registry/index.js';
import {
  decodeRelayFrame,
  encodeRelayFrame,
  handshakeFrame,
  keepalive,
  resetFrame,
  WEBSOCKET_KEEPALIVE_INTERVAL_MS,
  WEBSOCKET_PONG_TIMEOUT_MS,
  type RelayDataFrame,
  type RelayFrame,
  type RelayHandshakeFrame,
} from '../../relay/index.js';
import type { Executor } from '../executor.js';
import type { HarnessKeyValidator } from './harnessKeyValidator.js';
import { BatchedBinaryFrames } from './batchedBinaryFrames.js';
import { RelayStream, type RelayStreamHost } from './relayStream.js';

/** Why `serveMultiplexedEnvironment` returned (codex's disconnect reasons). */
export type RelayDisconnectReason =
  'peer_close' | 'read_error' | 'write_error' | 'pong_timeout' | 'local_shutdown';

/** Bounds of one relay socket; each names the codex constant it mirrors. */
export interface MultiplexedEnvironmentLimits {
  /** `MAX_ACTIVE_NOISE_RELAY_STREAMS`. */
  readonly maxActiveStreams: number;
  /** `MAX_PENDING_HANDSHAKE_VALIDATIONS`. */
  readonly maxPendingValidations: number;
  /** `HARNESS_KEY_VALIDATION_TIMEOUT`. */
  readonly validationTimeoutMs: number;
  /** `MAX_FAILED_NOISE_HANDSHAKES`: the failure that starts a cooldown. */
  readonly maxFailedHandshakes: number;
  /** How long new handshakes are refused after the budget is spent (observed ≈ 10 s). */
  readonly failedHandshakeCooldownMs: number;
}

/**
 * The relay limits of codex's executor (active streams, pending validations, failed handshakes and
 * their cool-down).
 */
export const DEFAULT_MULTIPLEXED_ENVIRONMENT_LIMITS: MultiplexedEnvironmentLimits = {
  maxActiveStreams: 128,
  maxPendingValidations: 32,
  validationTimeoutMs: HARNESS_KEY_VALIDATION_TIMEOUT_MS,
  maxFailedHandshakes: 8,
  failedHandshakeCooldownMs: 10_000,
};

/** What happened on the socket, for logs and tests. Never carries secrets. */
export type RelayEnvironmentEvent =
  | { readonly kind: 'stream-opened'; readonly streamId: string }
  | { readonly kind: 'stream-closed'; readonly streamId: string; readonly reset: boolean }
  | {
      readonly kind: 'handshake-refused';
      readonly streamId: string;
      readonly reason: HandshakeRefusal;
      readonly counted: boolean;
      readonly detail?: string;
    }
  | { readonly kind: 'cooldown-started'; readonly failures: number }
  | { readonly kind: 'cooldown-ended' }
  | { readonly kind: 'frame-dropped'; readonly detail: string };

/**
 * Why the executor refused a harness handshake on a relay socket (reported in
 * `RelayEnvironmentEvent`s).
 */
export type HandshakeRefusal =
  | 'already-active'
  | 'duplicate-handshake'
  | 'cooling-down'
  | 'too-many-streams'
  | 'too-many-validations'
  | 'handshake-failed'
  | 'validation-failed'
  | 'early-data';

/**
 * Options of `serveMultiplexedEnvironment`: the executor, the registration it serves, its identity
 * and the harness key validator.
 */
export interface MultiplexedEnvironmentOptions {
  /** `createExecutor()`; shared by every socket so sessions survive reconnects. */
  readonly executor: Executor;
  readonly environmentId: string;
  readonly registrationId: string;
  readonly identity: NoiseChannelIdentity;
  readonly validator: HarnessKeyValidator;
  /** WebSocket Ping cadence and Pong deadline, default 30 000 / 60 000 ms. */
  readonly keepalive?: { pingIntervalMs: number; pongTimeoutMs: number };
  readonly crypto?: NoiseCryptoProvider;
  readonly limits?: Partial<MultiplexedEnvironmentLimits>;
  /** Drives validation timeouts, the cooldown and the keepalive. */
  readonly scheduler?: SchedulerLike;
  /** Aborting ends the relay with `local_shutdown` (streams end, the socket closes). */
  readonly signal?: AbortSignal;
  /**
   * For a server-side socket (accepted by a `WebSocketServer`): the TCP socket it was upgraded
   * from. Data frames are then written onto it directly, several per write
   * (`BatchedBinaryFrames`); without it they go through `socket.send` one by one.
   */
  readonly rawSocket?: Duplex;
  /** Called with each stream and handshake event of the socket. */
  readonly onEvent?: (event: RelayEnvironmentEvent) => void;
}

interface PendingValidation {
  readonly streamId: string;
  readonly request: NoiseResponderHandshake;
  readonly subscription: Subscription;
}

/** Largest stream id accepted (codex `MAX_RELAY_STREAM_ID_BYTES`). */
const MAX_STREAM_ID_LENGTH = 128;

/**
 * Data frames are encoded into reusable buffers of this size (a sealed 61440-byte record plus
 * its header fits; larger frames get their own buffer), so a steady stream allocates no external
 * memory per frame (spec/server/relay/batchedBinaryFrames.spec.ts holds the reuse to completed
 * writes; `bench/noise-throughput.ts`).
 */
const FRAME_BUFFER_BYTES = 64 * 1024;
/** Frame buffers kept for reuse; more are only in flight while the socket is backed up. */
const SPARE_FRAME_BUFFERS = 32;
/** Unsent bytes above which the socket reports itself backed up (streams pause output). */
const BACKLOG_LIMIT_BYTES = 512 * 1024;
/** Paused output resumes once the unsent bytes are down to this. */
const RESUME_AT_BYTES = BACKLOG_LIMIT_BYTES / 2;

/**
 * Serves many harness streams on one relay WebSocket (the rendezvous socket, or an accepted
 * direct socket). Resolves with the disconnect reason once the socket is done; never rejects.
 */
export function serveMultiplexedEnvironment(
  socket: WebSocket,
  options: MultiplexedEnvironmentOptions,
): Promise<RelayDisconnectReason> {
  return new MultiplexedEnvironment(socket, options).done;
}

class MultiplexedEnvironment implements RelayStreamHost {
  readonly done: Promise<RelayDisconnectReason>;
  private resolveDone!: (reason: RelayDisconnectReason) => void;
  private readonly limits: MultiplexedEnvironmentLimits;
  private readonly scheduler: SchedulerLike;
  private readonly crypto: NoiseCryptoProvider;
  private readonly active = new Map<string, RelayStream>();
  private readonly pending = new Map<string, PendingValidation>();
  private readonly subscriptions = new Subscription();
  private readonly pongs = new Subject<void>();
  private failures = 0;
  private cooldown: Subscription | undefined;
  private ended = false;
  /** Bytes handed to the socket whose writes have not completed yet. */
  private unsentBytes = 0;
  private drainWaiters: (() => void)[] = [];
  private readonly spareFrameBuffers: Buffer[] = [];
  private readonly batched: BatchedBinaryFrames | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly options: MultiplexedEnvironmentOptions,
  ) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.limits = { ...DEFAULT_MULTIPLEXED_ENVIRONMENT_LIMITS, ...options.limits };
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.crypto = options.crypto ?? platformCryptoProvider;
    const raw = options.rawSocket;
    if (raw) {
      const isOpen = (): boolean => !this.ended && socket.readyState === WebSocket.OPEN;
      this.batched = new BatchedBinaryFrames({
        raw,
        get open() {
          return isOpen();
        },
        writing: (bytes) => (this.unsentBytes += bytes),
        written: (bytes, error) => this.written(bytes, error),
      });
    }

    if (socket.readyState !== WebSocket.OPEN) {
      this.end('peer_close');
      return;
    }
    socket.on('message', (data: WebSocket.RawData, isBinary: boolean) =>
      this.onMessage(data, isBinary),
    );
    socket.on('pong', () => this.pongs.next());
    // ws reports protocol violations (oversize message, bad opcode) as 'error' before 'close'.
    socket.on('error', () => this.end('read_error'));
    socket.on('close', () => this.end('peer_close'));
    this.subscriptions.add(
      keepalive(this.pongs, {
        intervalMs: options.keepalive?.pingIntervalMs ?? WEBSOCKET_KEEPALIVE_INTERVAL_MS,
        pongTimeoutMs: options.keepalive?.pongTimeoutMs ?? WEBSOCKET_PONG_TIMEOUT_MS,
        scheduler: this.scheduler,
      }).subscribe({
        next: () => socket.ping(),
        error: () => this.end('pong_timeout'),
      }),
    );
    const signal = options.signal;
    if (signal) {
      const onAbort = (): void => this.end('local_shutdown');
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        this.subscriptions.add(() => signal.removeEventListener('abort', onAbort));
      }
    }
  }

  // ---- RelayStreamHost ----

  write(frame: RelayFrame): void {
    if (this.ended || this.socket.readyState !== WebSocket.OPEN) return;
    this.batched?.flush(); // frames already assembled go first
    this.send(encodeRelayFrame(frame), undefined);
  }

  frameBuffer(length: number): Buffer {
    if (this.batched) return this.batched.frameBuffer(length);
    if (length > FRAME_BUFFER_BYTES) return Buffer.allocUnsafe(length);
    return this.spareFrameBuffers.pop() ?? Buffer.allocUnsafeSlow(FRAME_BUFFER_BYTES);
  }

  sendFrame(frame: Buffer, buffer: Buffer): void {
    if (this.batched) return this.batched.sendFrame(frame);
    if (this.ended || this.socket.readyState !== WebSocket.OPEN) return this.recycle(buffer);
    this.send(frame, buffer);
  }

  flushFrames(): void {
    this.batched?.flush();
  }

  get backedUp(): boolean {
    return this.unsentBytes > BACKLOG_LIMIT_BYTES;
  }

  onceDrained(drained: () => void): void {
    if (!this.ended) this.drainWaiters.push(drained);
  }

  streamClosed(stream: RelayStream): void {
    if (this.active.get(stream.streamId) !== stream) return;
    this.active.delete(stream.streamId);
    this.write(resetFrame(stream.streamId));
    this.emit({ kind: 'stream-closed', streamId: stream.streamId, reset: true });
  }

  /** Sends one encoded frame; `buffer` (a frame buffer holding it) is reused once written. */
  private send(bytes: Uint8Array, buffer: Buffer | undefined): void {
    const length = bytes.length;
    this.unsentBytes += length;
    // ws sends a Buffer as it is (no copy) and calls back once the socket has taken it, or
    // failed.
    this.socket.send(bytes, (error?: Error) => {
      if (buffer) this.recycle(buffer);
      this.written(length, error);
    });
  }

  /** `bytes` handed to the socket earlier have left it (or the write failed). */
  private written(bytes: number, error: Error | null | undefined): void {
    this.unsentBytes -= bytes;
    if (error) return this.end('write_error');
    if (this.drainWaiters.length > 0 && this.unsentBytes <= RESUME_AT_BYTES) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const drained of waiters) drained();
    }
  }

  private recycle(buffer: Buffer): void {
    if (
      buffer.length === FRAME_BUFFER_BYTES &&
      this.spareFrameBuffers.length < SPARE_FRAME_BUFFERS
    ) {
      this.spareFrameBuffers.push(buffer);
    }
  }

  // ---- inbound ----

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.ended) return;
    if (!isBinary) {
      this.emit({ kind: 'frame-dropped', detail: 'text frame on a Noise relay socket' });
      return;
    }
    let frame: RelayFrame;
    try {
      frame = decodeRelayFrame(toBytes(data));
    } catch (error) {
      this.emit({ kind: 'frame-dropped', detail: describe(error) });
      return;
    }
    const streamId = frame.streamId;
    if (streamId.length > MAX_STREAM_ID_LENGTH || streamId.trim() !== streamId) {
      this.emit({
        kind: 'frame-dropped',
        detail: 'relay message frame stream_id is not canonical',
      });
      return;
    }
    switch (frame.kind) {
      case 'handshake':
        this.onHandshake(frame);
        return;
      case 'data':
        this.onData(frame);
        return;
      case 'reset':
        this.onReset(streamId);
        return;
      default:
        return; // resume, ack, heartbeat: ignored
    }
  }

  private onHandshake(frame: RelayHandshakeFrame): void {
    const streamId = frame.streamId;
    const existing = this.active.get(streamId);
    if (existing) {
      this.active.delete(streamId);
      existing.end(new DisconnectedError('Noise relay stream received a second handshake'));
      this.refuse(streamId, 'already-active', false);
      return;
    }
    const pending = this.pending.get(streamId);
    if (pending) {
      this.cancelPending(pending);
      this.refuse(streamId, 'duplicate-handshake', true);
      return;
    }
    if (this.cooldown) return this.refuse(streamId, 'cooling-down', false);
    if (this.active.size >= this.limits.maxActiveStreams) {
      return this.refuse(streamId, 'too-many-streams', false);
    }
    if (this.pending.size >= this.limits.maxPendingValidations) {
      return this.refuse(streamId, 'too-many-validations', false);
    }
    let request: NoiseResponderHandshake;
    try {
      request = responderHandshake({
        identity: this.options.identity,
        prologue: prologue({
          environmentId: this.options.environmentId,
          executorRegistrationId: this.options.registrationId,
          streamId,
        }),
        message1: frame.payload,
        crypto: this.crypto,
      });
    } catch (error) {
      return this.refuse(streamId, 'handshake-failed', true, describe(error));
    }
    const entry: PendingValidation = { streamId, request, subscription: new Subscription() };
    this.pending.set(streamId, entry);
    const ms = this.limits.validationTimeoutMs;
    entry.subscription.add(
      // defer: a validator that throws instead of erroring is a refusal, not a crash.
      defer(() =>
        this.options.validator.validateHarnessKey(
          request.initiatorPublicKey,
          request.authorization,
          streamId,
        ),
      )
        .pipe(timeout({ first: ms, scheduler: this.scheduler }), take(1), defaultIfEmpty(false))
        .subscribe({
          next: (valid) =>
            this.onValidated(entry, valid === true, valid ? undefined : 'validator refused'),
          error: (error: unknown) => this.onValidated(entry, false, describe(error)),
        }),
    );
  }

  private onValidated(entry: PendingValidation, valid: boolean, detail?: string): void {
    const streamId = entry.streamId;
    if (this.ended || this.pending.get(streamId) !== entry) return; // stale
    this.pending.delete(streamId);
    if (!valid) return this.refuse(streamId, 'validation-failed', true, detail);
    if (this.active.size >= this.limits.maxActiveStreams) {
      return this.refuse(streamId, 'too-many-streams', false);
    }
    let accepted: ReturnType<NoiseResponderHandshake['accept']>;
    try {
      accepted = entry.request.accept();
    } catch (error) {
      return this.refuse(streamId, 'handshake-failed', true, describe(error));
    }
    const stream = new RelayStream(streamId, accepted.channel, this);
    this.active.set(streamId, stream);
    this.write(handshakeFrame(streamId, accepted.message2));
    this.emit({ kind: 'stream-opened', streamId });
    this.options.executor.serveTransport(stream, `exec-server noise relay stream ${streamId}`);
  }

  private onData(frame: RelayDataFrame): void {
    const streamId = frame.streamId;
    const stream = this.active.get(streamId);
    if (!stream) {
      const pending = this.pending.get(streamId);
      if (pending) {
        this.cancelPending(pending);
        this.refuse(streamId, 'early-data', true);
      } else {
        this.write(resetFrame(streamId));
      }
      return;
    }
    try {
      stream.receive(frame);
    } catch (error) {
      if (this.active.get(streamId) === stream) this.active.delete(streamId);
      stream.end(error instanceof Error ? error : new Error(String(error)));
      this.write(resetFrame(streamId));
      this.emit({ kind: 'stream-closed', streamId, reset: true });
    }
  }

  private onReset(streamId: string): void {
    const pending = this.pending.get(streamId);
    if (pending) this.cancelPending(pending);
    const stream = this.active.get(streamId);
    if (stream) {
      this.active.delete(streamId);
      stream.end();
      this.emit({ kind: 'stream-closed', streamId, reset: false });
    }
  }

  // ---- failure budget ----

  private refuse(
    streamId: string,
    reason: HandshakeRefusal,
    counted: boolean,
    detail?: string,
  ): void {
    this.write(resetFrame(streamId));
    this.emit({
      kind: 'handshake-refused',
      streamId,
      reason,
      counted,
      ...(detail === undefined ? {} : { detail }),
    });
    if (!counted || this.cooldown) return;
    this.failures += 1;
    if (this.failures < this.limits.maxFailedHandshakes) return;
    const failures = this.failures;
    this.cooldown = timer(this.limits.failedHandshakeCooldownMs, this.scheduler).subscribe(() => {
      this.cooldown = undefined;
      this.failures = 0;
      this.emit({ kind: 'cooldown-ended' });
    });
    this.emit({ kind: 'cooldown-started', failures });
  }

  private cancelPending(entry: PendingValidation): void {
    this.pending.delete(entry.streamId);
    entry.subscription.unsubscribe();
  }

  // ---- shutdown ----

  private end(reason: RelayDisconnectReason): void {
    if (this.ended) return;
    this.ended = true;
    this.subscriptions.unsubscribe();
    this.cooldown?.unsubscribe();
    this.pongs.complete();
    this.drainWaiters = [];
    for (const entry of this.pending.values()) entry.subscription.unsubscribe();
    this.pending.clear();
    const streams = [...this.active.values()];
    this.active.clear();
    for (const stream of streams) {
      stream.end(
        new DisconnectedError(`exec-server transport disconnected: Noise relay ${reason}`),
      );
    }
    if (reason === 'local_shutdown') {
      if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1001);
      else this.socket.terminate();
    } else if (reason !== 'peer_close') {
      this.socket.terminate();
    }
    this.resolveDone(reason);
  }

  private emit(event: RelayEnvironmentEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // An observer's bug must not break the relay.
    }
  }
}

function toBytes(data: WebSocket.RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return data;
}

function describe(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'message' in error) {
    return String((error as { message: unknown }).message);
  }
  return String(error);
}
