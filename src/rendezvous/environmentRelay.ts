/**
 * The WebSocket relay of one environment (noise-relay.md §1, §4, §11): one executor socket
 * (`role=environment`) and any number of harness sockets (`role=harness`), each claiming its
 * stream ids with `resume`. Frames are routed by `stream_id` and forwarded byte for byte; the
 * relay decodes only the protobuf envelope (stream id and kind), never a Noise payload.
 *
 * Stream teardown, which codex leaves to the rendezvous: when a harness socket goes away the
 * executor gets a `reset` for each of its streams; when the executor socket goes away (or is
 * replaced by a reconnect) each harness gets a `reset` for its streams. Resets carry codex's
 * fixed reason `noise_relay_protocol_error` (harnesses discard it anyway).
 *
 * Back-pressure, both directions (codex does not publish its rendezvous' semantics; these are
 * ours): a relay must slow a fast sender down rather than lose a user's stream.
 * - Executor slow to read: harnesses writing to it are paused until its socket drains.
 * - A harness slow to read (a busy client decrypting): once its socket holds more than
 *   `maxBufferedBytes`, the relay stops reading the executor socket, so TCP back-pressure
 *   reaches the executor, and resumes once every such harness has drained below half. The
 *   trade-off: one slow harness briefly slows every other stream on the same executor socket
 *   (they share it). A harness is dropped only when it makes no progress at all for
 *   `stallTimeoutMs` (a dead or wedged client must not hold the executor forever), or when its
 *   buffer passes 4x `maxBufferedBytes`, which only frames already in flight when the executor
 *   was paused can cause. The stall timeout must stay below the Pong timeout: a paused
 *   executor socket reads no Pongs either.
 *
 * Over 400 lines for one reason: routing, teardown and back-pressure act on the same socket and
 * stream tables, so the rules above are kept in one class.
 */
import { Observable, type SchedulerLike, type Subscription, timer } from 'rxjs';
import WebSocket, { type RawData } from 'ws';
import {
  decodeRelayFrame,
  encodeRelayFrame,
  keepalive,
  resetFrame,
  type RelayFrame,
} from '../relay/index.js';
import { type DroppedFrameCause, RendezvousFrameError } from './rendezvousErrors.js';
import type { RendezvousEvent } from './rendezvousEvents.js';

export interface EnvironmentRelayOptions {
  readonly keepalive: { readonly pingIntervalMs: number; readonly pongTimeoutMs: number };
  readonly scheduler: SchedulerLike;
  /** Streams routed at once per environment (codex's executor serves at most 128). */
  readonly maxStreams: number;
  /** Streams one harness socket may hold at once, so one client cannot take them all. */
  readonly maxStreamsPerHarness: number;
  /**
   * High-water mark of bytes queued on one socket: above it the relay stops reading the
   * sockets that feed it (the executor for a slow harness; the harnesses for a slow
   * executor) and resumes once it is below half.
   */
  readonly maxBufferedBytes: number;
  /** How long a congested harness may make no progress at all before it is dropped. */
  readonly stallTimeoutMs: number;
  readonly emit: (event: RendezvousEvent) => void;
}

export type ExecutorDetachReason =
  'closed' | 'replaced' | 'superseded' | 'pong_timeout' | 'draining' | 'shutdown';

/** WebSocket close codes the relay uses when it ends a socket itself. */
const CLOSE_GOING_AWAY = 1001;
const CLOSE_REPLACED = 4000;

/** A harness whose buffer passes this many times `maxBufferedBytes` is dropped at once. */
const HARD_CAP_FACTOR = 4;

interface HarnessLink {
  readonly socket: WebSocket;
  readonly streams: Set<string>;
  keepalive?: Subscription;
  /** Runs while the harness is congested; fires once no write has completed for the timeout. */
  stallWatch?: Subscription;
  /** When the congested harness last completed a write (the scheduler's clock). */
  progressAt?: number;
  /** The stream a drop for stalling names; undefined after progress (any of its streams). */
  stalledStream?: string;
}

interface ExecutorLink {
  readonly socket: WebSocket;
  readonly registrationId: string;
  keepalive?: Subscription;
}

export class EnvironmentRelay {
  private executor: ExecutorLink | undefined;
  private readonly routes = new Map<string, HarnessLink>();
  private readonly harnesses = new Set<HarnessLink>();
  /** Harnesses paused because the executor socket is congested. */
  private readonly paused = new Set<HarnessLink>();
  /** Harnesses whose own socket is congested; while any is, the executor socket is paused. */
  private readonly congested = new Set<HarnessLink>();

  constructor(
    readonly environmentId: string,
    private readonly options: EnvironmentRelayOptions,
  ) {}

  /** Registration id of the attached executor socket, if one is attached. */
  get attachedRegistrationId(): string | undefined {
    return this.executor?.registrationId;
  }

  get streamCount(): number {
    return this.routes.size;
  }

  get harnessCount(): number {
    return this.harnesses.size;
  }

  /** A new executor socket replaces the old one; every routed stream is reset. */
  attachExecutor(socket: WebSocket, registrationId: string): void {
    if (this.executor) this.detachExecutor('replaced');
    const link: ExecutorLink = { socket, registrationId };
    this.executor = link;
    socket.on('message', (data: RawData, isBinary: boolean) =>
      this.onExecutorMessage(link, data, isBinary),
    );
    socket.on('close', () => {
      if (this.executor === link) this.detachExecutor('closed');
    });
    socket.on('error', () => undefined); // 'close' follows
    link.keepalive = this.watch(socket, () => {
      if (this.executor === link) this.detachExecutor('pong_timeout');
    });
    this.options.emit({
      type: 'executor-attached',
      environmentId: this.environmentId,
      registrationId,
    });
  }

  /** Ends the executor socket (if any) and resets every stream on the harness side. */
  detachExecutor(reason: ExecutorDetachReason): void {
    const link = this.executor;
    if (!link) return;
    this.executor = undefined;
    link.keepalive?.unsubscribe();
    for (const [streamId, harness] of this.routes) {
      this.sendReset(harness.socket, streamId, 'harness', 'executor_gone');
      harness.streams.delete(streamId);
    }
    this.routes.clear();
    this.resumePaused();
    for (const harness of this.congested) this.stopStallWatch(harness);
    this.congested.clear();
    link.socket.resume(); // a paused socket would never read the executor's close frame
    if (reason === 'pong_timeout') link.socket.terminate();
    else if (link.socket.readyState === WebSocket.OPEN) {
      link.socket.close(
        reason === 'shutdown' || reason === 'draining' ? CLOSE_GOING_AWAY : CLOSE_REPLACED,
        `rendezvous: executor connection ${reason}`,
      );
    }
    this.options.emit({
      type: 'executor-detached',
      environmentId: this.environmentId,
      registrationId: link.registrationId,
      reason,
    });
  }

  attachHarness(socket: WebSocket): void {
    const link: HarnessLink = { socket, streams: new Set() };
    this.harnesses.add(link);
    socket.on('message', (data: RawData, isBinary: boolean) =>
      this.onHarnessMessage(link, data, isBinary),
    );
    socket.on('close', () => this.detachHarness(link));
    socket.on('error', () => undefined); // 'close' follows
    link.keepalive = this.watch(socket, () => socket.terminate());
  }

  /** True while neither an executor nor a harness socket is attached. */
  get idle(): boolean {
    return this.executor === undefined && this.harnesses.size === 0;
  }

  /** Shutdown (or draining): closes every socket of this environment. */
  close(reason: 'shutdown' | 'draining' = 'shutdown'): void {
    this.detachExecutor(reason);
    for (const link of [...this.harnesses]) {
      link.socket.close(CLOSE_GOING_AWAY, 'rendezvous shutting down');
      this.detachHarness(link);
    }
  }

  private detachHarness(link: HarnessLink): void {
    if (!this.harnesses.delete(link)) return;
    link.keepalive?.unsubscribe();
    this.paused.delete(link);
    this.clearCongestion(link);
    for (const streamId of link.streams) {
      this.routes.delete(streamId);
      if (this.executor) {
        this.sendReset(this.executor.socket, streamId, 'environment', 'harness_gone');
      }
    }
    link.streams.clear();
  }

  private onHarnessMessage(link: HarnessLink, data: RawData, isBinary: boolean): void {
    const bytes = toBytes(data);
    const frame = this.decode(bytes, isBinary, 'harness');
    if (!frame) return;
    const { streamId } = frame;
    const owner = this.routes.get(streamId);

    if (frame.kind === 'resume') {
      if (owner === link) {
        this.forwardToExecutor(link, frame, bytes);
        return;
      }
      if (owner) {
        this.refuse(link, streamId, 'stream_in_use', 'another harness socket holds this stream');
        return;
      }
      if (link.streams.size >= this.options.maxStreamsPerHarness) {
        this.refuse(
          link,
          streamId,
          'no_capacity',
          `this harness socket already holds ${this.options.maxStreamsPerHarness} streams`,
        );
        return;
      }
      if (!this.executor || this.routes.size >= this.options.maxStreams) {
        this.refuse(
          link,
          streamId,
          'no_capacity',
          this.executor
            ? `${this.options.maxStreams} streams already routed`
            : 'no executor attached',
        );
        return;
      }
      this.routes.set(streamId, link);
      link.streams.add(streamId);
      this.options.emit({ type: 'stream-claimed', environmentId: this.environmentId, streamId });
      this.forwardToExecutor(link, frame, bytes);
      return;
    }

    if (owner !== link) {
      const error = new RendezvousFrameError(
        'unclaimed_stream',
        'harness',
        `${frame.kind} frame on a stream not claimed with resume`,
      );
      this.options.emit({
        type: 'frame-dropped',
        environmentId: this.environmentId,
        streamId,
        error,
      });
      if (frame.kind !== 'reset') this.sendReset(link.socket, streamId, 'harness', 'refused');
      return;
    }
    this.forwardToExecutor(link, frame, bytes);
    if (frame.kind === 'reset') this.release(link, streamId);
  }

  private onExecutorMessage(link: ExecutorLink, data: RawData, isBinary: boolean): void {
    if (this.executor !== link) return;
    const bytes = toBytes(data);
    const frame = this.decode(bytes, isBinary, 'environment');
    if (!frame) return;
    const harness = this.routes.get(frame.streamId);
    if (!harness) {
      this.options.emit({
        type: 'frame-dropped',
        environmentId: this.environmentId,
        streamId: frame.streamId,
        error: new RendezvousFrameError(
          'unknown_stream',
          'environment',
          `${frame.kind} frame for a stream no harness holds`,
        ),
      });
      // Tell the executor the stream is gone, but never answer a reset with a reset.
      if (frame.kind !== 'reset') {
        this.sendReset(link.socket, frame.streamId, 'environment', 'harness_gone');
      }
      return;
    }
    if (!this.forwardToHarness(harness, frame.streamId, bytes)) return;
    this.options.emit({
      type: 'frame-forwarded',
      environmentId: this.environmentId,
      streamId: frame.streamId,
      kind: frame.kind,
      to: 'harness',
      bytes: bytes.length,
    });
    if (frame.kind === 'reset') this.release(harness, frame.streamId);
  }

  /** Sends one executor frame to its harness; false when the harness had to be dropped. */
  private forwardToHarness(harness: HarnessLink, streamId: string, bytes: Uint8Array): boolean {
    if (harness.socket.bufferedAmount > HARD_CAP_FACTOR * this.options.maxBufferedBytes) {
      this.dropHarness(harness, streamId, 'overflow');
      return false;
    }
    this.send(harness.socket, bytes, () => this.onHarnessWritten(harness));
    if (
      harness.socket.bufferedAmount > this.options.maxBufferedBytes &&
      !this.congested.has(harness)
    ) {
      this.congested.add(harness);
      this.startStallWatch(harness, streamId);
      if (this.congested.size === 1 && this.executor) {
        this.executor.socket.pause();
        this.options.emit({ type: 'executor-paused', environmentId: this.environmentId, streamId });
      }
    }
    return true;
  }

  /** A write to the harness completed: progress. Resumes the executor once all drained. */
  private onHarnessWritten(harness: HarnessLink): void {
    if (!this.congested.has(harness)) return;
    if (harness.socket.bufferedAmount <= this.options.maxBufferedBytes / 2) {
      this.clearCongestion(harness);
    } else {
      // Progress: recorded, not a timer restarted per completed write.
      harness.progressAt = this.options.scheduler.now();
      harness.stalledStream = undefined;
    }
  }

  private clearCongestion(harness: HarnessLink): void {
    this.stopStallWatch(harness);
    if (!this.congested.delete(harness) || this.congested.size > 0) return;
    if (this.executor) {
      this.executor.socket.resume();
      this.options.emit({ type: 'executor-resumed', environmentId: this.environmentId });
    }
  }

  private startStallWatch(harness: HarnessLink, streamId: string): void {
    this.stopStallWatch(harness);
    harness.progressAt = this.options.scheduler.now();
    harness.stalledStream = streamId;
    this.armStallWatch(harness, this.options.stallTimeoutMs);
  }

  /** Drops the harness once `stallTimeoutMs` have passed since its last progress. */
  private armStallWatch(harness: HarnessLink, delayMs: number): void {
    harness.stallWatch = timer(delayMs, this.options.scheduler).subscribe(() => {
      const idleMs = this.options.scheduler.now() - (harness.progressAt ?? 0);
      if (idleMs < this.options.stallTimeoutMs) {
        this.armStallWatch(harness, this.options.stallTimeoutMs - idleMs);
        return;
      }
      this.dropHarness(harness, harness.stalledStream ?? firstOf(harness.streams), 'stalled');
    });
  }

  private stopStallWatch(harness: HarnessLink): void {
    harness.stallWatch?.unsubscribe();
    harness.stallWatch = undefined;
  }

  /** Ends a harness that cannot keep up; detaching it resets its streams at the executor. */
  private dropHarness(
    harness: HarnessLink,
    streamId: string | undefined,
    why: 'overflow' | 'stalled',
  ): void {
    this.options.emit({
      type: 'harness-dropped',
      environmentId: this.environmentId,
      ...(streamId === undefined ? {} : { streamId }),
      why,
    });
    harness.socket.terminate();
    this.detachHarness(harness);
  }

  private forwardToExecutor(link: HarnessLink, frame: RelayFrame, bytes: Uint8Array): void {
    const executor = this.executor;
    if (!executor) {
      this.refuse(link, frame.streamId, 'no_capacity', 'no executor attached');
      this.release(link, frame.streamId);
      return;
    }
    this.send(executor.socket, bytes, () => this.onExecutorDrained());
    this.options.emit({
      type: 'frame-forwarded',
      environmentId: this.environmentId,
      streamId: frame.streamId,
      kind: frame.kind,
      to: 'environment',
      bytes: bytes.length,
    });
    // Back-pressure: stop reading this harness until the executor socket drains.
    if (executor.socket.bufferedAmount > this.options.maxBufferedBytes && !this.paused.has(link)) {
      this.paused.add(link);
      link.socket.pause();
    }
  }

  private onExecutorDrained(): void {
    const executor = this.executor;
    if (this.paused.size === 0) return;
    if (!executor || executor.socket.bufferedAmount <= this.options.maxBufferedBytes / 2) {
      this.resumePaused();
    }
  }

  private resumePaused(): void {
    for (const link of this.paused) link.socket.resume();
    this.paused.clear();
  }

  private release(link: HarnessLink, streamId: string): void {
    link.streams.delete(streamId);
    if (this.routes.get(streamId) === link) this.routes.delete(streamId);
  }

  private refuse(
    link: HarnessLink,
    streamId: string,
    cause: DroppedFrameCause,
    detail: string,
  ): void {
    this.options.emit({
      type: 'frame-dropped',
      environmentId: this.environmentId,
      streamId,
      error: new RendezvousFrameError(cause, 'harness', detail),
    });
    this.sendReset(link.socket, streamId, 'harness', 'refused');
  }

  /** Decodes the envelope; a message that is not a valid frame is dropped and reported. */
  private decode(
    bytes: Uint8Array,
    isBinary: boolean,
    from: 'environment' | 'harness',
  ): RelayFrame | undefined {
    if (!isBinary) {
      this.options.emit({
        type: 'frame-dropped',
        environmentId: this.environmentId,
        error: new RendezvousFrameError(
          'text_message',
          from,
          'relay frames are binary protobuf messages',
        ),
      });
      return undefined;
    }
    try {
      // The payload stays a view of `bytes`: the frame is forwarded as it came.
      return decodeRelayFrame(bytes);
    } catch (error) {
      this.options.emit({
        type: 'frame-dropped',
        environmentId: this.environmentId,
        error: new RendezvousFrameError(
          'malformed_frame',
          from,
          error instanceof Error ? error.message : String(error),
          { cause: error },
        ),
      });
      return undefined;
    }
  }

  private sendReset(
    socket: WebSocket,
    streamId: string,
    to: 'environment' | 'harness',
    why: 'harness_gone' | 'executor_gone' | 'refused',
  ): void {
    this.send(socket, encodeRelayFrame(resetFrame(streamId)));
    this.options.emit({
      type: 'stream-reset',
      environmentId: this.environmentId,
      streamId,
      to,
      why,
    });
  }

  private send(socket: WebSocket, bytes: Uint8Array, onWritten?: () => void): void {
    if (socket.readyState !== WebSocket.OPEN) {
      onWritten?.();
      return;
    }
    socket.send(bytes, { binary: true }, () => onWritten?.());
  }

  /** Pings the socket; a missed Pong ends it through `onDead`. */
  private watch(socket: WebSocket, onDead: () => void): Subscription {
    // Not rxjs `fromEvent`: it prefers ws's addEventListener, which knows no 'pong' event.
    const pongs = new Observable<void>((subscriber) => {
      const onPong = (): void => subscriber.next();
      socket.on('pong', onPong);
      return () => socket.off('pong', onPong);
    });
    return keepalive(pongs, {
      intervalMs: this.options.keepalive.pingIntervalMs,
      pongTimeoutMs: this.options.keepalive.pongTimeoutMs,
      scheduler: this.options.scheduler,
    }).subscribe({
      next: () => {
        if (socket.readyState === WebSocket.OPEN) socket.ping();
      },
      error: () => onDead(),
    });
  }
}

function firstOf(values: Set<string>): string | undefined {
  for (const value of values) return value;
  return undefined;
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return data;
}
