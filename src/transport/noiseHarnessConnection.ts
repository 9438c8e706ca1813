/**
 * The harness side of one Noise relay stream once its socket is open (noise-relay.md §6.4):
 * writes frames during the handshake, then seals outgoing JSON-RPC texts into records and opens
 * incoming ones as the `Transport` that `connectNoiseHarness` emits.
 */
import { map, Subject, type Subscription } from 'rxjs';
import { DisconnectedError, MessageTooLargeError } from '../protocol/errors.js';
import {
  decodeRelayFrame,
  encodeRelayFrame,
  MAX_NOISE_JSONRPC_MESSAGE_LEN,
  PipelinedRelayDataReceiver,
  RelayDataReceiver,
  type AsyncRecordDecrypter,
  type RecordCipher,
  type RelayFrame,
} from '../relay/index.js';
import { concatBytes } from '../platform/bytes.js';
import {
  platform,
  WEBSOCKET_OPEN,
  type PlatformWebSocket,
  type WebSocketData,
} from '../platform/index.js';
import { errorMessage } from './errorMessage.js';
import {
  NoiseRelayHarnessProtocolError,
  NoiseRelayStreamResetError,
} from './noiseHarnessErrors.js';
import { NoiseRecordSender } from './noiseRecordSender.js';
import { requestTraceContext } from './noiseTraceContext.js';
import type { Transport } from './transport.js';

/** The socket after `open`: writes frames, and once the channel exists runs the transport. */
export class HarnessConnection {
  /** Decrypted messages, checked as UTF-8 (`platform.utf8Checked`: bytes on Node). */
  private readonly incoming = new Subject<string | Uint8Array>();
  private sender: NoiseRecordSender | undefined;
  private receiver: RelayDataReceiver | undefined;
  /**
   * Where the platform decrypts asynchronously: the receiver used instead of `receiver`, and
   * the chain every later socket event (frame, close) runs on, so that events keep their
   * arrival order (nothing after a failed record is delivered, nothing before a close is lost).
   */
  private pipelined: { receiver: PipelinedRelayDataReceiver; events: Promise<void> } | undefined;
  private keepaliveSubscription: Subscription | undefined;
  private finished = false;
  private closedByUs = false;
  /** Reading stopped by the transport's `setPaused` (flow control for a slow consumer). */
  private pausedReading = false;

  readonly transport: Transport;

  constructor(
    private readonly socket: PlatformWebSocket,
    private readonly streamId: string,
    private readonly pongs: Subject<void>,
  ) {
    this.transport = {
      incoming$: this.incoming.pipe(
        map((message) => (typeof message === 'string' ? message : platform.utf8Decode(message))),
      ),
      incomingUtf8$: this.incoming.asObservable(),
      send: (message) => this.send(message),
      close: () => this.close(),
      setPaused: (paused) => {
        this.pausedReading = paused;
        if (paused) this.socket.pause();
        else this.socket.resume();
      },
    };
  }

  /** True while reading is paused: a Pong cannot be read then, so the keepalive skips its Ping. */
  get paused(): boolean {
    return this.pausedReading;
  }

  start(
    channel: {
      send: { encrypt(p: Uint8Array): Uint8Array };
      receive: Pick<RecordCipher, 'decrypt'> &
        Partial<AsyncRecordDecrypter> & {
          readonly decryptsAsync?: boolean;
        };
    },
    keepaliveSubscription: Subscription,
  ): void {
    this.sender = new NoiseRecordSender(this.streamId, channel.send);
    this.receiver = new RelayDataReceiver(channel.receive);
    const { receive } = channel;
    if (receive.decryptsAsync === true && receive.decryptAsync !== undefined) {
      this.pipelined = {
        receiver: new PipelinedRelayDataReceiver({
          decryptAsync: (ciphertext) => receive.decryptAsync!(ciphertext),
        }),
        events: Promise.resolve(),
      };
    }
    this.keepaliveSubscription = keepaliveSubscription;
  }

  write(frame: RelayFrame): void {
    if (this.socket.readyState !== WEBSOCKET_OPEN) return;
    this.socket.send(encodeRelayFrame(frame));
  }

  private send(message: string): void {
    if (this.finished || this.sender === undefined) return;
    if (this.socket.readyState !== WEBSOCKET_OPEN) return;
    // Refused before anything is encrypted, so the stream goes on (at most 3 UTF-8 bytes per
    // UTF-16 unit: most messages need no count).
    if (message.length * 3 > MAX_NOISE_JSONRPC_MESSAGE_LEN) {
      const bytes = platform.utf8ByteLength(message);
      if (bytes > MAX_NOISE_JSONRPC_MESSAGE_LEN)
        throw new MessageTooLargeError(bytes, MAX_NOISE_JSONRPC_MESSAGE_LEN);
    }
    let frames;
    try {
      frames = this.sender.send(message, requestTraceContext(message));
    } catch (error) {
      // Oversize message or exhausted sequence: the stream cannot continue consistently.
      this.fail(protocolError(errorMessage(error), { cause: error }));
      this.terminate();
      return;
    }
    for (const frame of frames) this.socket.send(encodeRelayFrame(frame));
  }

  receive(data: WebSocketData, isBinary: boolean): void {
    if (this.finished || this.receiver === undefined) return;
    if (!isBinary) {
      this.inOrder(() =>
        this.failAndTerminate(protocolError('Noise relay expects binary protobuf frames')),
      );
      return;
    }
    let frame: RelayFrame;
    try {
      frame = decodeRelayFrame(toBytes(data));
    } catch (error) {
      this.inOrder(() =>
        this.failAndTerminate(
          protocolError('Noise relay received invalid post-handshake frame', { cause: error }),
        ),
      );
      return;
    }
    if (frame.streamId !== this.streamId) return;
    switch (frame.kind) {
      case 'data': {
        if (this.pipelined === undefined) {
          this.deliver(() => this.receiver!.receive(frame));
          return;
        }
        // Decryption starts now; delivery waits for the events before it.
        const messages = this.pipelined.receiver.receive(frame);
        messages.catch(() => undefined);
        this.inOrder(() =>
          messages.then(
            (opened) => this.deliver(() => opened),
            (error: unknown) =>
              this.deliver(() => {
                throw error;
              }),
          ),
        );
        return;
      }
      case 'reset':
        this.inOrder(() => this.failAndTerminate(new NoiseRelayStreamResetError(false)));
        return;
      case 'handshake':
        this.inOrder(() =>
          this.failAndTerminate(protocolError('Noise relay received invalid post-handshake frame')),
        );
        return;
      default:
        return;
    }
  }

  /** Emits the messages `receive` returns; its throw (reorder, decryption, framing) ends the stream. */
  private deliver(receive: () => Uint8Array[]): void {
    let messages: (string | Uint8Array)[];
    try {
      // Throws RelayProtocolError (reorder window, decryption, framing) with codex's text.
      messages = receive().map((bytes) => checkedUtf8(bytes));
    } catch (error) {
      this.failAndTerminate(error instanceof Error ? error : protocolError(errorMessage(error)));
      return;
    }
    for (const message of messages) {
      if (this.finished) return;
      this.incoming.next(message);
    }
  }

  /**
   * Runs `step` now, or, where decryption is asynchronous, after the socket events before it
   * (skipped once the stream has ended).
   */
  private inOrder(step: () => void | Promise<void>): void {
    if (this.pipelined === undefined) {
      void step();
      return;
    }
    this.pipelined.events = this.pipelined.events.then(() => {
      if (!this.finished) return step();
    });
  }

  private failAndTerminate(error: Error): void {
    this.fail(error);
    this.terminate();
  }

  /** Ends `incoming$` with `error` (once). */
  fail(error: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.keepaliveSubscription?.unsubscribe();
    this.incoming.error(error);
  }

  closed(code: number, reason: Uint8Array, lastError: Error | undefined): void {
    this.keepaliveSubscription?.unsubscribe();
    this.pongs.complete();
    this.inOrder(() => this.closedAfterFrames(code, reason, lastError));
  }

  private closedAfterFrames(code: number, reason: Uint8Array, lastError: Error | undefined): void {
    if (this.finished) return;
    if (this.closedByUs || code === 1000 || code === 1001) {
      this.finished = true;
      this.incoming.complete();
      return;
    }
    const detail =
      lastError?.message ??
      `connection closed with code ${code}${reason.length > 0 ? ` (${platform.utf8Decode(reason)})` : ''}`;
    this.fail(
      new DisconnectedError(`exec-server transport disconnected: ${detail}`, { cause: lastError }),
    );
  }

  private terminate(): void {
    this.closedByUs = true;
    this.socket.terminate();
  }

  private close(): void {
    if (this.closedByUs) return;
    this.closedByUs = true;
    if (!this.finished) {
      this.finished = true;
      this.keepaliveSubscription?.unsubscribe();
      this.incoming.complete();
    }
    // The harness never sends `reset`: closing its socket is how a stream ends (§11).
    if (this.socket.readyState === WEBSOCKET_OPEN) this.socket.close(1000);
    else this.socket.terminate();
  }
}

function checkedUtf8(bytes: Uint8Array): string | Uint8Array {
  const message = platform.utf8Checked(bytes);
  if (message === undefined) throw protocolError('Noise relay JSON-RPC message is not valid UTF-8');
  return message;
}

export function protocolError(
  detail: string,
  options?: { cause?: unknown },
): NoiseRelayHarnessProtocolError {
  return new NoiseRelayHarnessProtocolError(detail, options);
}

/** Binary frames only (the callers check `isBinary`), so never a string. */
export function toBytes(data: WebSocketData): Uint8Array {
  if (Array.isArray(data)) return concatBytes(...data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (typeof data === 'string') return platform.utf8Encode(data);
  return data;
}
