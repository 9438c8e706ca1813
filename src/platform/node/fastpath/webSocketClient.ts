/**
 * The Node platform's client WebSocket (RFC 6455, client side) on `node:net`, `node:tls` or the
 * proxy tunnel of ../webSocketProxy.ts: the upgrade request written straight onto the socket,
 * frames read by ./serverFrameReader.ts. It behaves as the `ws` client it replaces — its plain
 * twin, bench/plain/platform/node/fastpath/webSocketClient.ts — does for everything the seam
 * (`PlatformWebSocket`) exposes: the same events in the same order, the same close codes, the
 * same refusals of a misbehaving server (spec/platform/node/fastpath/webSocketClient.spec.ts).
 * What it saves is Node's HTTP client and `ws`'s stream machinery on every connect and message
 * (docs/performance.md, "Our own client WebSocket"; `npx tsx bench/fast-paths-client.ts`).
 *
 * Contract kept from `ws`: an error before `open` is emitted as 'error', then 'close' (1006);
 * after `open` a socket error is not emitted, the connection closes (1006); a frame the server
 * should not have sent is emitted as 'error', answered with a Close frame and ends reading.
 */
import { EventEmitter } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import {
  WEBSOCKET_CLOSED,
  WEBSOCKET_CLOSING,
  WEBSOCKET_CONNECTING,
  WEBSOCKET_OPEN,
  type PlatformWebSocket,
  type WebSocketOpenOptions,
} from '../../platform.js';
import { proxiedConnection, tlsConnectOptions } from '../webSocketProxy.js';
import { maskedFrame } from './maskedFrame.js';
import { refusedUpgradeReader } from './refusedUpgrade.js';
import { FrameError, ServerFrameReader, isValidCloseCode } from './serverFrameReader.js';
import { OPCODE } from '../../webSocketOpcodes.js';

/** `ws`'s default limit on an inbound message. */
const DEFAULT_MAX_PAYLOAD_BYTES = 100 * 1024 * 1024;
/** The upgrade answer's head may take this much (Node's default `maxHeaderSize`). */
const MAX_RESPONSE_HEAD_BYTES = 16 * 1024;
/** At most this much of a refused upgrade's body is handed on. */
const MAX_REFUSAL_BODY_BYTES = 64 * 1024;
/** After our Close frame, the server has this long to close the connection (`ws`: 30 s). */
const CLOSE_TIMEOUT_MS = 30_000;
/** RFC 6455 §1.3. */
const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** Header names: RFC 7230 tokens. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Opens a client WebSocket to `url` (`ws:` or `wss:`); throws on a bad URL or header. */
export function openWebSocket(url: string, options: WebSocketOpenOptions = {}): PlatformWebSocket {
  return new ClientWebSocket(url, options);
}

class ClientWebSocket extends EventEmitter implements PlatformWebSocket {
  private state: number = WEBSOCKET_CONNECTING;
  private socket: Duplex | undefined;
  private readonly key = randomBytes(16).toString('base64');
  private head: Buffer | undefined;
  private readonly reader: ServerFrameReader;
  private sendingFragments = false;
  private closeSent = false;
  private closeReceived = false;
  private closeCode = 1006;
  private closeReason: Buffer = Buffer.alloc(0);
  private closeTimer: NodeJS.Timeout | undefined;
  private errorEmitted = false;
  private pendingError: Error | undefined;

  constructor(url: string, options: WebSocketOpenOptions) {
    super();
    const target = new URL(url);
    // As `ws`: an http(s) URL names the same server as ws(s).
    if (!['ws:', 'wss:', 'http:', 'https:'].includes(target.protocol)) {
      throw new SyntaxError(`The URL's protocol must be "ws:" or "wss:", not "${target.protocol}"`);
    }
    if (target.hash !== '') throw new SyntaxError('The URL contains a fragment identifier');
    const secure = target.protocol === 'wss:' || target.protocol === 'https:';
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const port = target.port === '' ? (secure ? 443 : 80) : Number(target.port);
    const request = this.upgradeRequest(target, options.headers ?? {});
    const maxPayload = options.maxPayload ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.reader = new ServerFrameReader(maxPayload, this.frames);
    if (options.proxy !== undefined) {
      proxiedConnection(
        options.proxy,
        secure,
        options.tls,
      )({ host, port }, (error, socket) => {
        if (socket !== undefined && this.state !== WEBSOCKET_CONNECTING) socket.destroy();
        else if (error) this.failOpening(error);
        else if (socket !== undefined) this.attach(socket, request);
      });
      return;
    }
    const socket = secure
      ? tlsConnect({ host, port, ...tlsConnectOptions(host, options.tls) })
      : netConnect({ host, port });
    this.attach(socket, request);
  }

  get readyState(): number {
    return this.state;
  }

  send(
    data: string | Uint8Array,
    options: { binary?: boolean; fin?: boolean } = {},
    callback?: (error?: Error) => void,
  ): void {
    this.throwIfConnecting();
    if (this.state !== WEBSOCKET_OPEN) {
      if (callback) process.nextTick(callback, new Error('WebSocket is not open'));
      return;
    }
    const binary = options.binary ?? typeof data !== 'string';
    const fin = options.fin ?? true;
    const opcode = this.sendingFragments
      ? OPCODE.continuation
      : binary
        ? OPCODE.binary
        : OPCODE.text;
    this.sendingFragments = !fin;
    // The stream's callback gets null on success, which the seam's `callback()` allows.
    this.socket!.write(maskedFrame(opcode, fin, data), callback as (error?: Error | null) => void);
  }

  ping(): void {
    this.throwIfConnecting();
    if (this.state === WEBSOCKET_OPEN) this.socket!.write(maskedFrame(OPCODE.ping, true, ''));
  }

  close(code?: number, reason = ''): void {
    if (this.state === WEBSOCKET_CLOSED) return;
    if (this.state === WEBSOCKET_CONNECTING) {
      this.failOpening(new Error('WebSocket was closed before the connection was established'));
      return;
    }
    if (code !== undefined && !isValidCloseCode(code)) {
      throw new TypeError(`invalid WebSocket close code ${code}`);
    }
    if (Buffer.byteLength(reason) > 123) {
      throw new RangeError('a WebSocket close reason takes at most 123 bytes');
    }
    if (this.state === WEBSOCKET_OPEN) {
      this.state = WEBSOCKET_CLOSING;
      this.sendClose(code, reason);
    }
    if (this.closeReceived) this.socket?.end();
  }

  terminate(): void {
    if (this.state === WEBSOCKET_CLOSED) return;
    if (this.state === WEBSOCKET_CONNECTING) {
      this.failOpening(new Error('WebSocket was closed before the connection was established'));
      return;
    }
    this.state = WEBSOCKET_CLOSING;
    this.socket?.destroy();
  }

  private throwIfConnecting(): void {
    if (this.state === WEBSOCKET_CONNECTING) {
      throw new Error('WebSocket is not open: readyState 0 (CONNECTING)');
    }
  }

  /** Stops reading the socket (TCP then pushes back); frames already read still arrive. */
  pause(): void {
    if (this.state === WEBSOCKET_CONNECTING || this.state === WEBSOCKET_CLOSED) return;
    this.socket?.pause();
  }

  resume(): void {
    if (this.state === WEBSOCKET_CONNECTING || this.state === WEBSOCKET_CLOSED) return;
    this.socket?.resume();
  }

  /** The GET request that asks for the upgrade (§4.1); throws on a header Node would refuse. */
  private upgradeRequest(target: URL, headers: Record<string, string>): string {
    let text =
      `GET ${target.pathname || '/'}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
      `Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
      `Sec-WebSocket-Key: ${this.key}\r\n`;
    for (const [name, value] of Object.entries(headers)) {
      if (!TOKEN.test(name)) throw new TypeError(`invalid HTTP header name \`${name}\``);
      if (/[\r\n\0]/.test(String(value))) {
        throw new TypeError(`invalid character in the value of HTTP header \`${name}\``);
      }
      text += `${name}: ${value}\r\n`;
    }
    return `${text}\r\n`;
  }

  private attach(socket: Duplex, request: string): void {
    this.socket = socket;
    (socket as Partial<Socket>).setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => {
      if (this.state === WEBSOCKET_CONNECTING) this.readHead(chunk);
      else this.readFrames(chunk);
    });
    socket.on('error', (error: Error) => {
      if (this.state === WEBSOCKET_CONNECTING) this.failOpening(error);
      else socket.destroy(); // `ws` does not report a socket error once open: 'close' 1006 follows
    });
    socket.on('end', () => {
      if (this.state === WEBSOCKET_OPEN) this.state = WEBSOCKET_CLOSING;
      // (Still connecting: `closed` reports the missing answer.)
      this.reader.end();
      socket.end();
    });
    socket.on('close', () => this.closed());
    socket.write(request);
  }

  /** Gathers the answer to the upgrade request until its head is whole, then judges it. */
  private readHead(chunk: Buffer): void {
    const head = this.head === undefined ? chunk : Buffer.concat([this.head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if ((end < 0 ? head.length : end) > MAX_RESPONSE_HEAD_BYTES) {
      this.failOpening(
        new Error(`the upgrade answer's header is over ${MAX_RESPONSE_HEAD_BYTES} bytes`),
      );
      return;
    }
    if (end < 0) {
      this.head = head;
      return;
    }
    this.head = undefined;
    const [statusLine = '', ...lines] = head.subarray(0, end).toString('latin1').split('\r\n');
    const fields = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0)
        fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const rest = head.subarray(end + 4);
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
    if (status === undefined) {
      this.failOpening(new Error('the server did not answer the upgrade request with HTTP'));
      return;
    }
    if (status !== '101') {
      this.refused(Number(status), fields, rest);
      return;
    }
    const accept = createHash('sha1')
      .update(this.key + ACCEPT_GUID)
      .digest('base64');
    const problem =
      fields.get('upgrade')?.toLowerCase() !== 'websocket'
        ? 'Invalid Upgrade header'
        : fields.get('sec-websocket-accept') !== accept
          ? 'Invalid Sec-WebSocket-Accept header'
          : fields.has('sec-websocket-protocol')
            ? 'Server sent a subprotocol but none was requested'
            : fields.has('sec-websocket-extensions')
              ? 'Server indicated an extension that was not requested'
              : undefined;
    if (problem !== undefined) {
      this.failOpening(new Error(problem));
      return;
    }
    this.state = WEBSOCKET_OPEN;
    this.emit('open');
    if (rest.length > 0 && this.state === WEBSOCKET_OPEN) this.readFrames(rest);
  }

  /**
   * The upgrade was answered with another status: 'unexpected-response' with the answer's
   * body (./refusedUpgrade.ts), or, when nobody listens, an error as `ws` reports it.
   */
  private refused(statusCode: number, fields: Map<string, string>, rest: Buffer): void {
    if (this.listenerCount('unexpected-response') === 0) {
      this.failOpening(new Error(`Unexpected server response: ${statusCode}`));
      return;
    }
    const socket = this.socket!;
    const answer = refusedUpgradeReader(statusCode, fields, MAX_REFUSAL_BODY_BYTES);
    socket.removeAllListeners('data');
    socket.on('data', answer.push);
    socket.on('close', answer.end);
    this.emit('unexpected-response', undefined, answer.body);
    answer.push(rest);
  }

  /** Feeds the frame reader; a protocol violation fails the connection (1002, 1007, 1009). */
  private readFrames(chunk: Buffer): void {
    try {
      this.reader.push(chunk);
    } catch (error) {
      if (!(error instanceof FrameError)) throw error;
      this.socket?.removeAllListeners('data');
      if (this.state === WEBSOCKET_OPEN) {
        this.state = WEBSOCKET_CLOSING;
        this.sendClose(error.closeCode, '');
      }
      this.emitError(error);
    }
  }

  private readonly frames = {
    message: (data: Buffer, isBinary: boolean): void => {
      this.emit('message', data, isBinary);
    },
    ping: (payload: Buffer): void => {
      if (this.state === WEBSOCKET_OPEN)
        this.socket!.write(maskedFrame(OPCODE.pong, true, payload));
    },
    pong: (): void => {
      this.emit('pong');
    },
    close: (code: number, reason: Buffer): void => {
      this.closeReceived = true;
      this.closeCode = code;
      this.closeReason = reason;
      if (this.state === WEBSOCKET_OPEN) {
        this.state = WEBSOCKET_CLOSING;
        this.sendClose(code === 1005 ? undefined : code, reason);
      }
      this.socket?.end();
    },
  };

  private sendClose(code: number | undefined, reason: string | Buffer): void {
    if (this.closeSent) return;
    this.closeSent = true;
    const reasonBytes = typeof reason === 'string' ? Buffer.from(reason) : reason;
    let payload = Buffer.alloc(0);
    if (code !== undefined) {
      payload = Buffer.allocUnsafe(2 + reasonBytes.length);
      payload.writeUInt16BE(code, 0);
      reasonBytes.copy(payload, 2);
    }
    this.socket!.write(maskedFrame(OPCODE.close, true, payload));
    this.closeTimer = setTimeout(() => this.socket?.destroy(), CLOSE_TIMEOUT_MS);
  }

  /**
   * An attempt that ends before `open`: 'error' (on the next tick, as `ws` does, so a caller
   * of `close()` or `terminate()` never sees it synchronously), then 'close' 1006.
   */
  private failOpening(error: Error): void {
    if (this.state !== WEBSOCKET_CONNECTING) return;
    this.state = WEBSOCKET_CLOSING;
    this.pendingError = error;
    process.nextTick(() => this.flushError());
    if (this.socket === undefined) process.nextTick(() => this.closed());
    else this.socket.destroy();
  }

  private flushError(): void {
    const error = this.pendingError;
    if (error === undefined) return;
    this.pendingError = undefined;
    this.emitError(error);
  }

  private emitError(error: Error): void {
    if (this.errorEmitted) return;
    this.errorEmitted = true;
    this.emit('error', error);
  }

  private closed(): void {
    if (this.state === WEBSOCKET_CLOSED) return;
    if (this.state === WEBSOCKET_CONNECTING) {
      this.state = WEBSOCKET_CLOSING;
      this.pendingError = new Error('the connection closed before the server answered the upgrade');
    }
    this.flushError();
    this.state = WEBSOCKET_CLOSED;
    clearTimeout(this.closeTimer);
    this.reader.end();
    this.emit('close', this.closeCode, this.closeReason);
  }
}
