/**
 * One admitted harness stream on a multiplexed relay socket, seen by the executor's connection
 * processor as an ordinary `Transport`: inbound data frames are reordered, decrypted and
 * reassembled into JSON texts; outbound texts become encrypted data frames on the shared socket.
 * Like the plain WebSocket transport it takes `process/output` texts in pieces (`SplitText`)
 * and reports the socket's backlog, so the processor pauses child output while the relay is
 * behind (see `backpressure.ts`).
 */
import { Subject } from 'rxjs';
import type { NoiseChannel } from '../../noise/index.js';
import { ProtocolError } from '../../protocol/errors.js';
import {
  LENGTH_PREFIX_BYTES,
  RelayDataReceiver,
  type RelayDataFrame,
  type RelayFrame,
  type RelayTraceContext,
} from '../../relay/index.js';
import { requestTraceContext } from '../../transport/noiseTraceContext.js';
import { decodeUtf8Strict } from '../../transport/noiseUtf8.js';
import type { BackpressureTransport } from '../backpressure.js';
import type { SplitText, SplitTextTransport } from '../splitText.js';
import {
  PACKED_SCRATCH_BYTES,
  PackedRecordWriter,
  utf8Length,
  type OutboundText,
  type SealedFrameSink,
} from './packedRecordWriter.js';

export interface RelayStreamHost extends SealedFrameSink {
  /** Queues one frame on the shared socket. */
  write(frame: RelayFrame): void;
  /** The stream ended on our side (processor closed it, or a send failed): reset it. */
  streamClosed(stream: RelayStream): void;
  /** True while the shared socket holds more unsent bytes than it wants to. */
  readonly backedUp: boolean;
  /** Calls `drained` once the socket's backlog has gone down; never if the socket ends first. */
  onceDrained(drained: () => void): void;
}

export class RelayStream implements SplitTextTransport, BackpressureTransport {
  private readonly incoming = new Subject<string>();
  private readonly writer: PackedRecordWriter;
  private readonly receiver: RelayDataReceiver;
  private ended = false;
  private queue: OutboundText[] = [];
  private lengths: number[] = [];
  private queuedBytes = 0;
  private queueTrace: RelayTraceContext | undefined;
  private flushTimer: ReturnType<typeof setImmediate> | undefined;

  readonly incoming$ = this.incoming.asObservable();

  constructor(
    readonly streamId: string,
    channel: NoiseChannel,
    private readonly host: RelayStreamHost,
  ) {
    this.writer = new PackedRecordWriter(streamId, channel.send, host);
    this.receiver = new RelayDataReceiver(channel.receive);
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get backedUp(): boolean {
    return this.host.backedUp;
  }

  onceDrained(drained: () => void): void {
    this.host.onceDrained(drained);
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
    this.enqueue(message);
  }

  /** Like `send(head + ascii + tail)`; a notification, so it never carries a trace. */
  sendSplit(text: SplitText): void {
    if (this.ended) return;
    this.enqueue(text);
  }

  private enqueue(text: OutboundText): void {
    const length = utf8Length(text);
    const bytes = LENGTH_PREFIX_BYTES + length;
    // Batches stay within the packing scratch buffer (only a single huge text exceeds it).
    if (this.queuedBytes > 0 && this.queuedBytes + bytes > PACKED_SCRATCH_BYTES) this.flush();
    this.queue.push(text);
    this.lengths.push(length);
    this.queuedBytes += bytes;
    if (this.queuedBytes >= PACKED_SCRATCH_BYTES) this.flush();
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
    const texts = this.queue;
    const lengths = this.lengths;
    const trace = this.queueTrace;
    this.queue = [];
    this.lengths = [];
    this.queuedBytes = 0;
    this.queueTrace = undefined;
    if (this.ended) return;
    try {
      this.writer.write(texts, lengths, trace);
    } catch {
      // Oversize message or exhausted sequence: this stream cannot continue.
      this.close();
    }
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
    this.lengths = [];
    this.queuedBytes = 0;
    if (error) this.incoming.error(error);
    else this.incoming.complete();
  }
}
