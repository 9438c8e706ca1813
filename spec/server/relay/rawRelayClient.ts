/**
 * Test helper: a hand-driven relay socket that can run many harness streams at once (the real
 * rendezvous multiplexes harnesses onto one executor socket), send any frame or raw bytes, and
 * wait for the executor's frames per stream. Used to exercise the executor's per-socket state
 * machine, which one-stream-per-socket harnesses cannot reach.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { HYBRID_IK_PATTERN } from '../../../src/noise/handshakePattern.js';
import { HandshakeState } from '../../../src/noise/handshakeState.js';
import { identityKeys } from '../../../src/noise/identity.js';
import { publicKeyRawKeys } from '../../../src/noise/publicKey.js';
import {
  initiatorHandshake,
  NoiseChannelIdentity,
  NoiseChannelPublicKey,
  platformCryptoProvider,
  prologue,
  type NoiseChannel,
} from '../../../src/noise/index.js';
import {
  decodeRelayFrame,
  encodeRelayFrame,
  handshakeFrame,
  MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
  RelayDataReceiver,
  RelayDataSender,
  resumeFrame,
  type RelayFrame,
} from '../../../src/relay/index.js';
import type { NoiseTarget } from '../../support/noiseExecServer.js';

/** Where a raw relay socket goes and whose key its handshakes are encrypted to. */
export interface RawRelayTarget {
  readonly url: string;
  readonly environmentId: string;
  readonly registrationId: string;
  readonly executorKey: NoiseChannelPublicKey;
}

function rawTarget(target: NoiseTarget | RawRelayTarget): RawRelayTarget {
  return 'identity' in target ? { ...target, executorKey: target.identity.publicKey() } : target;
}

const FRAME_WAIT_MS = 5_000;

export interface HandshakeOptions {
  streamId?: string;
  identity?: NoiseChannelIdentity;
  authorization?: string | Uint8Array;
  /** Builds the prologue from these instead of the target's (wrong prologue tests). */
  environmentId?: string;
  registrationId?: string;
  /** Encrypt message 1 to this key instead of the target's (wrong key tests). */
  executorKey?: NoiseChannelPublicKey;
  /** Flip one byte of message 1 (tamper tests). */
  tamper?: boolean;
}

/** An admitted stream: JSON-RPC over the Noise channel, by hand. */
export class RawStream {
  private readonly sender: RelayDataSender;
  private readonly receiver: RelayDataReceiver;
  private readonly inbox: string[] = [];

  constructor(
    readonly client: RawRelayClient,
    readonly streamId: string,
    channel: NoiseChannel,
  ) {
    this.sender = new RelayDataSender(streamId, channel.send);
    this.receiver = new RelayDataReceiver(channel.receive);
  }

  send(message: unknown): void {
    for (const frame of this.sender.send(JSON.stringify(message))) this.client.send(frame);
  }

  /** The next JSON-RPC message on this stream; rejects if a reset comes first. */
  async nextMessage(): Promise<Record<string, unknown>> {
    while (this.inbox.length === 0) {
      const frame = await this.client.nextFrame(this.streamId);
      if (frame.kind === 'reset') throw new Error(`stream ${this.streamId} was reset`);
      if (frame.kind !== 'data') continue;
      for (const bytes of this.receiver.receive(frame)) {
        this.inbox.push(new TextDecoder().decode(bytes));
      }
    }
    return JSON.parse(this.inbox.shift()!) as Record<string, unknown>;
  }

  /** `initialize` (optionally resuming) + `initialized`; returns the session id. */
  async initialize(resumeSessionId: string | null = null): Promise<string> {
    this.send({ id: 1, method: 'initialize', params: { clientName: 'raw', resumeSessionId } });
    const reply = await this.nextMessage();
    const result = reply.result as { sessionId?: string } | undefined;
    if (!result?.sessionId) throw new Error(`initialize failed: ${JSON.stringify(reply)}`);
    this.send({ method: 'initialized' });
    return result.sessionId;
  }

  /** One request/response (ids from 2). */
  private nextId = 2;
  async request(method: string, params: unknown = null): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    this.send({ id, method, params });
    for (;;) {
      const message = await this.nextMessage();
      if (message.id === id) return message;
    }
  }
}

export class RawRelayClient {
  private readonly queues = new Map<string, RelayFrame[]>();
  private readonly waiters = new Map<string, Array<(frame: RelayFrame) => void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Every frame received, in order. */
  readonly received: RelayFrame[] = [];
  readonly closed: Promise<{ code: number }>;

  private constructor(
    readonly socket: WebSocket,
    readonly target: RawRelayTarget,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', (code) => resolve({ code })));
    socket.on('message', (data: Buffer) => {
      const frame = decodeRelayFrame(data);
      this.received.push(frame);
      const waiter = this.waiters.get(frame.streamId)?.shift();
      if (waiter) waiter(frame);
      else {
        const queue = this.queues.get(frame.streamId) ?? [];
        queue.push(frame);
        this.queues.set(frame.streamId, queue);
      }
    });
  }

  static async open(
    relayTarget: NoiseTarget | RawRelayTarget,
    options: { autoPong?: boolean } = {},
  ): Promise<RawRelayClient> {
    const target = rawTarget(relayTarget);
    const socket = new WebSocket(target.url, {
      perMessageDeflate: false,
      maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
      autoPong: options.autoPong ?? true,
    });
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new RawRelayClient(socket, target);
  }

  send(frame: RelayFrame): void {
    this.socket.send(encodeRelayFrame(frame));
  }

  sendRaw(data: Uint8Array | string, binary = typeof data !== 'string'): void {
    this.socket.send(data, { binary });
  }

  /** The next frame the executor sent on `streamId` (rejects after 5 s). */
  nextFrame(streamId: string, waitMs = FRAME_WAIT_MS): Promise<RelayFrame> {
    const queued = this.queues.get(streamId)?.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        const list = this.waiters.get(streamId) ?? [];
        const index = list.indexOf(deliver);
        if (index !== -1) list.splice(index, 1);
        reject(new Error(`no frame on stream ${streamId} within ${waitMs} ms`));
      }, waitMs);
      this.timers.add(timer);
      const deliver = (frame: RelayFrame): void => {
        clearTimeout(timer);
        this.timers.delete(timer);
        resolve(frame);
      };
      const list = this.waiters.get(streamId) ?? [];
      list.push(deliver);
      this.waiters.set(streamId, list);
    });
  }

  /** Frames received so far on `streamId` without waiting. */
  framesOn(streamId: string): RelayFrame[] {
    return this.received.filter((frame) => frame.streamId === streamId);
  }

  /**
   * Sends resume + handshake for one stream; `reply` resolves with the executor's answer:
   * the stream (handshake accepted) or `'reset'`.
   */
  handshake(options: HandshakeOptions = {}): {
    streamId: string;
    reply: Promise<RawStream | 'reset'>;
  } {
    const streamId = options.streamId ?? randomUUID();
    const identity = options.identity ?? NoiseChannelIdentity.generate();
    const bytes = prologue({
      environmentId: options.environmentId ?? this.target.environmentId,
      executorRegistrationId: options.registrationId ?? this.target.registrationId,
      streamId,
    });
    const executorKey = options.executorKey ?? this.target.executorKey;
    const authorization = options.authorization ?? 'authorization';
    const initiator =
      typeof authorization !== 'string' && authorization.length > 4096
        ? oversizeInitiator(identity, executorKey, bytes, authorization)
        : initiatorHandshake({
            identity,
            responderPublicKey: executorKey,
            prologue: bytes,
            authorization,
          });
    const message1 = Uint8Array.from(initiator.message1);
    if (options.tamper) message1[message1.length - 1]! ^= 0x01;
    this.send(resumeFrame(streamId));
    this.send(handshakeFrame(streamId, message1));
    const reply = this.nextFrame(streamId).then((frame) => {
      if (frame.kind === 'reset') return 'reset' as const;
      if (frame.kind !== 'handshake') throw new Error(`unexpected ${frame.kind} frame`);
      return new RawStream(this, streamId, initiator.finish(frame.payload));
    });
    reply.catch(() => undefined); // tests may leave a reply unawaited
    return { streamId, reply };
  }

  /** Handshake that must be admitted. */
  async openStream(options: HandshakeOptions = {}): Promise<RawStream> {
    const result = await this.handshake(options).reply;
    if (result === 'reset') throw new Error('handshake was reset');
    return result;
  }

  /** Drops the socket; waits still pending never settle. */
  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.socket.terminate();
  }
}

/** Message 1 with an authorization beyond the 4096-byte limit the public API enforces. */
function oversizeInitiator(
  identity: NoiseChannelIdentity,
  executorKey: NoiseChannelPublicKey,
  bytes: Uint8Array,
  authorization: Uint8Array,
): { message1: Uint8Array; finish(message2: Uint8Array): NoiseChannel } {
  const state = new HandshakeState({
    pattern: HYBRID_IK_PATTERN,
    role: 'initiator',
    crypto: platformCryptoProvider,
    random: (n) => platformCryptoProvider.randomBytes(n),
    prologue: bytes,
    localStatic: identityKeys(identity),
    remoteStatic: publicKeyRawKeys(executorKey),
  });
  const message1 = state.writeMessage(authorization);
  return {
    message1,
    finish: () => {
      throw new Error('an oversize handshake is never answered');
    },
  };
}
