/**
 * The platform seam: everything the client stack needs that Node and browsers provide
 * differently (after vscode-jsonrpc's RAL). It is the lowest layer: it imports nothing from
 * the rest of `src/`, and `protocol` … `environment` reach the runtime only through it (the
 * `no-restricted-imports` rule in eslint.config.js keeps `node:` modules and `ws` out of those
 * folders). The implementation is chosen once, when the module graph is built: `selected.ts`
 * and `selectedCrypto.ts` name the Node ones, and the browser bundle
 * (scripts/bundle-browser.mjs) resolves them to `selectedBrowser.ts` and
 * `selectedCryptoBrowser.ts` instead. spec/platform/platform.spec.ts holds both to one contract.
 */

/**
 * Opens (AES-256-GCM, empty associated data) records under one key: ciphertext ‖ 16-byte tag
 * in, plaintext out, `undefined` when authentication fails. Calls may overlap; each settles
 * on its own.
 */
export type AsyncAesGcmOpen = (
  nonce: Uint8Array,
  ciphertext: Uint8Array,
) => Promise<Uint8Array | undefined>;

/** Synchronous primitives (the Noise handshake and records are synchronous). */
export interface PlatformCrypto {
  /** Cryptographically secure random bytes. */
  randomBytes(length: number): Uint8Array;
  /** X25519 public key of a 32-byte private key (clamped as RFC 7748 says). */
  x25519PublicKey(privateKey: Uint8Array): Uint8Array;
  /** X25519 shared secret; throws when the peer key is unusable (an all-zero result). */
  x25519SharedSecret(privateKey: Uint8Array, publicKey: Uint8Array): Uint8Array;
  /** AES-256-GCM encryption; returns ciphertext ‖ 16-byte tag. */
  aes256GcmSeal(
    key: Uint8Array,
    nonce: Uint8Array,
    associatedData: Uint8Array,
    plaintext: Uint8Array,
  ): Uint8Array;
  /** `aes256GcmSeal` written into `target` at `offset`; returns the bytes written. */
  aes256GcmSealInto(
    key: Uint8Array,
    nonce: Uint8Array,
    associatedData: Uint8Array,
    plaintext: Uint8Array,
    target: Uint8Array,
    offset: number,
  ): number;
  /** AES-256-GCM decryption of ciphertext ‖ tag; `undefined` when authentication fails. */
  aes256GcmOpen(
    key: Uint8Array,
    nonce: Uint8Array,
    associatedData: Uint8Array,
    ciphertext: Uint8Array,
  ): Uint8Array | undefined;
  /**
   * Where the platform has a faster asynchronous AES-GCM (browsers: WebCrypto), an opener for
   * one receive key; the Noise receive path then decrypts records off the main thread,
   * delivering them in order (src/relay/pipelinedDataReceiver.ts). Absent on Node, whose
   * synchronous `aes256GcmOpen` is the fast one.
   */
  aes256GcmOpener?(key: Uint8Array): AsyncAesGcmOpen;
  /** SHA-256 of the concatenation of `parts`. */
  sha256(...parts: Uint8Array[]): Uint8Array;
  /** HMAC-SHA-256 of the concatenation of `parts` under `key`. */
  hmacSha256(key: Uint8Array, ...parts: Uint8Array[]): Uint8Array;
  sha3_256(data: Uint8Array): Uint8Array;
  sha3_512(data: Uint8Array): Uint8Array;
  /** SHAKE128 of `data`, `outputLength` bytes. */
  shake128(data: Uint8Array, outputLength: number): Uint8Array;
  /** SHAKE256 of the concatenation of `parts`, `outputLength` bytes. */
  shake256(outputLength: number, ...parts: Uint8Array[]): Uint8Array;
}

/** One inbound WebSocket message: text frames may arrive as a string (browsers) or bytes (`ws`). */
export type WebSocketData = string | Uint8Array | ArrayBuffer | Uint8Array[];

/** The events the transports listen to (the `ws` names; a browser socket emits a subset). */
export interface WebSocketEvents {
  open: () => void;
  message: (data: WebSocketData, isBinary: boolean) => void;
  close: (code: number, reason: Uint8Array) => void;
  error: (error: Error) => void;
  /** Only where {@link Platform.webSocketPings} is true. */
  pong: () => void;
  /** Node only: the server answered the upgrade with another HTTP status. */
  'unexpected-response': (request: unknown, response: RefusedUpgrade) => void;
}

/** Node only: the HTTP answer to a refused upgrade (node:http's IncomingMessage is one). */
export interface RefusedUpgrade {
  readonly statusCode?: number;
  setEncoding(encoding: 'utf8'): unknown;
  on(event: 'data', listener: (text: string) => void): unknown;
  once(event: 'end' | 'error', listener: () => void): unknown;
}

/**
 * The part of `ws`'s WebSocket the transports use; a `ws` socket is one, and the browser
 * platform adapts the global `WebSocket` to it. `readyState` uses the WHATWG numbers.
 */
export interface PlatformWebSocket {
  readonly readyState: number;
  on<E extends keyof WebSocketEvents>(event: E, listener: WebSocketEvents[E]): unknown;
  once<E extends keyof WebSocketEvents>(event: E, listener: WebSocketEvents[E]): unknown;
  off<E extends keyof WebSocketEvents>(event: E, listener: WebSocketEvents[E]): unknown;
  /** `fin: false` continues a fragmented Text message (Node); browsers send it whole at `fin`. */
  send(
    data: string | Uint8Array,
    options?: { binary?: boolean; fin?: boolean },
    callback?: (error?: Error) => void,
  ): void;
  /** A WebSocket Ping; a no-op where {@link Platform.webSocketPings} is false. */
  ping(): void;
  close(code?: number, reason?: string): void;
  /** Drops the connection without a closing handshake (browsers: `close()`). */
  terminate(): void;
  /**
   * Stops reading from the peer until `resume()` (`ws`: the socket is paused, so TCP pushes back
   * on the sender); messages already read may still arrive. Browsers cannot stop reading: a no-op.
   */
  pause(): void;
  resume(): void;
}

export const WEBSOCKET_CONNECTING = 0;
export const WEBSOCKET_OPEN = 1;
export const WEBSOCKET_CLOSING = 2;
export const WEBSOCKET_CLOSED = 3;

/** TLS settings of a `wss://` connection (Node's `tls.connect` options). */
export interface WebSocketTlsOptions {
  /** Trusted certificate authorities (PEM), replacing the system roots. */
  readonly ca?: string | Uint8Array | Array<string | Uint8Array>;
  /** Client certificate and key (PEM) for servers that ask for one. */
  readonly cert?: string | Uint8Array;
  readonly key?: string | Uint8Array;
  /** Server name sent in SNI and checked against the certificate; default the URL host. */
  readonly servername?: string;
  /** Default true. False accepts any certificate: for tests only. */
  readonly rejectUnauthorized?: boolean;
}

export interface WebSocketOpenOptions {
  /** Extra upgrade headers; browsers cannot send any, so a non-empty map throws there. */
  headers?: Record<string, string>;
  /** Largest inbound message (Node; browsers have their own limit). */
  maxPayload?: number;
  /** TLS settings for `wss://` (Node; a browser uses its own, so any setting throws there). */
  tls?: WebSocketTlsOptions;
  /** An HTTP proxy for a CONNECT tunnel (Node; browsers use theirs, so it throws there). */
  proxy?: string;
}

/**
 * Everything but the crypto primitives, which are `platformCrypto` (a separate module, so a
 * bundle without Noise leaves them out).
 */
export interface Platform {
  readonly name: 'node' | 'browser';
  /** A lowercase random (v4) UUID. */
  randomUUID(): string;

  utf8Encode(text: string): Uint8Array;
  /** Invalid sequences become U+FFFD. */
  utf8Decode(bytes: Uint8Array): string;
  /** `undefined` when `bytes` is not valid UTF-8. */
  utf8DecodeStrict(bytes: Uint8Array): string | undefined;
  /**
   * `bytes` checked as UTF-8: `bytes` themselves where checking is cheaper than decoding
   * (Node), else their text (browsers); `undefined` when not valid UTF-8. What a transport hands
   * to `Transport.incomingUtf8$`.
   */
  utf8Checked(bytes: Uint8Array): string | Uint8Array | undefined;
  utf8ByteLength(text: string): number;
  /** Writes `text` as UTF-8 at `offset` (the caller sized `target`); returns the bytes written. */
  utf8EncodeInto(text: string, target: Uint8Array, offset: number): number;
  /** One character per byte, U+0000 to U+00FF (ISO-8859-1, not windows-1252). */
  latin1Decode(bytes: Uint8Array): string;

  /** Standard base64 with padding. */
  base64Encode(bytes: Uint8Array): string;
  /** Decodes base64 the caller has validated (standard alphabet, padded). */
  base64Decode(text: string): Uint8Array;
  /** URL-safe base64 without padding. */
  base64UrlEncode(bytes: Uint8Array): string;
  base64UrlDecode(text: string): Uint8Array;

  /** Opens a WebSocket (Node: `ws`, without per-message deflate; browsers: the global one). */
  openWebSocket(url: string, options?: WebSocketOpenOptions): PlatformWebSocket;
  /** Whether sockets can send Pings and report Pongs (browsers answer Pings but send none). */
  readonly webSocketPings: boolean;
  /** Lets a timer not keep the process alive (Node); a no-op elsewhere. */
  unrefTimer(timer: unknown): void;
  refTimer(timer: unknown): void;
}
