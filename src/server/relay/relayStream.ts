/**
 * One admitted harness stream on a multiplexed relay socket, seen by the executor's connection
 * processor as an ordinary `Transport`: inbound data frames are reordered, decrypted and
 * reassembled into JSON texts; outbound texts become encrypted data frames on the shared socket.
 */
import { Subject } from 'rxjs';
import type { NoiseChannel } from '../../noise/index.js';
import { ProtocolError } from '../../protocol/errors.js';
import {
  RelayDataReceiver,
  type RelayDataFrame,
  type RelayFrame,
  type RelayTraceContext,
} from '../../relay/index.js';
import { NoiseRecordSender } from '../../transport/noiseRecordSender.js';
import { requestTraceContext } from '../../transport/noiseTraceContext.js';
import { decodeUtf8Strict } from '../../transport/noiseUtf8.js';
import type { Transport } from '../../transport/transport.js';

/** Queued text that is flushed at once instead of waiting for the next turn (~1 MiB). */
const FLUSH_AT_CHARS = 1 << 20;

export interface RelayStreamHost {
  /** Queues one frame on the shared socket. */
  write(frame: RelayFrame): void;
  /** The stream ended on our side (processor closed it, or a send failed): reset it. */
  streamClosed(stream: RelayStream): void;
}

export class RelayStream implements Transport {
  private readonly incoming = new Subject<string>();
  private readonly sender: NoiseRecordSender;
  private readonly receiver: RelayDataReceiver;
  private ended = false;
  private queue: string[] = [];
  private queuedChars = 0;
  private queueTrace: RelayTraceContext | undefined;
  private flushTimer: ReturnType<typeof setImmediate> | undefined;

  readonly incoming$ = this.incoming.asObservable();

  constructor(
    readonly streamId: string,
    channel: NoiseChannel,
    private readonly host: RelayStreamHost,
  ) {
    this.sender = new NoiseRecordSender(streamId, channel.send);
    this.receiver = new RelayDataReceiver(channel.receive);
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Feeds one inbound data frame. Throws `ProtocolError` when the stream must be dropped. */
  receive(frame: RelayDataFrame): void {
    if (this.ended) return;
    for (const bytes of this.receiver.receive(frame)) {
      const text = decodeUtf8Strict(bytes);
      if (text === undefined) {
        throw new ProtocolError('Noise relay JSON-RPC message is not valid UTF-8');
      }
      this.incoming.next(text);
      if (this.ended) return;
    }
  }

  /**
   * Queues `message`; everything queued before the next `setImmediate` is packed into as few
   * records (and WebSocket messages) as possible, instead of one record per small notification
   * (output chunks are ~11 KiB of JSON). A request carrying a trace starts a batch of its own,
   * since only a batch's first frame can expose the trace (§5.4).
   */
  send(message: string): void {
    if (this.ended) return;
    const trace = requestTraceContext(message);
    if (trace !== undefined) {
      this.flush();
      this.queueTrace = trace;
    }
    this.queue.push(message);
    this.queuedChars += message.length;
    if (this.queuedChars >= FLUSH_AT_CHARS) this.flush();
    else this.flushTimer ??= setImmediate(this.flushQueued);
  }

  private readonly flushQueued = (): void => {
    this.flushTimer = undefined;
    this.flush();
  };

  /** Encrypts and writes everything queued, in order. */
  private flush(): void {
    if (this.flushTimer !== undefined) {
      clearImmediate(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (this.queue.length === 0) return;
    const messages = this.queue;
    const trace = this.queueTrace;
    this.queue = [];
    this.queuedChars = 0;
    this.queueTrace = undefined;
    if (this.ended) return;
    let frames: RelayDataFrame[];
    try {
      frames = this.sender.sendPacked(messages, trace);
    } catch {
      // Oversize message or exhausted sequence: this stream cannot continue.
      this.close();
      return;
    }
    for (const frame of frames) this.host.write(frame);
  }

  /** Closed by the connection processor: reset the stream at the harness. */
  close(): void {
    if (this.ended) return;
    // Whatever was sent before closing goes out ahead of the reset.
    this.flush();
    if (this.ended) return;
    this.end();
    this.host.streamClosed(this);
  }

  /** Ends `incoming$` without telling the host (the relay removed the stream itself). */
  end(error?: Error): void {
    if (this.ended) return;
    this.ended = true;
    if (this.flushTimer !== undefined) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    this.queue = [];
    if (error) this.incoming.error(error);
    else this.incoming.complete();
  }
}
