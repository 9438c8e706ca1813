/**
 * Test helper: raw relay sockets on a rendezvous (no Noise), to drive routing frame by frame.
 * `frames` collects every decoded binary message; `next()` waits for the next one (bounded).
 */
import WebSocket, { type ClientOptions, type RawData } from 'ws';
import {
  decodeRelayFrame,
  encodeRelayFrame,
  MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
  type RelayFrame,
} from '../../src/relay/index.js';

export interface RawRelaySocket {
  readonly socket: WebSocket;
  /** Every frame received so far, with its exact bytes. */
  readonly received: { frame: RelayFrame; bytes: Uint8Array }[];
  send(frame: RelayFrame): void;
  sendRaw(data: Uint8Array | string): void;
  /** The next frame not yet returned by `next()`; rejects after `ms`. */
  next(ms?: number): Promise<RelayFrame>;
  /** Resolves with the close code once the rendezvous closes the socket; rejects after `ms`. */
  closed(ms?: number): Promise<number>;
  close(): Promise<void>;
}

/** Opens a socket; rejects with `HTTP <status>` if the upgrade is refused. */
export function openRelaySocket(url: string, options: ClientOptions = {}): Promise<RawRelaySocket> {
  const socket = new WebSocket(url, {
    maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
    perMessageDeflate: false,
    ...options,
  });
  const received: { frame: RelayFrame; bytes: Uint8Array }[] = [];
  let taken = 0;
  const waiters: (() => void)[] = [];
  let closeCode: number | undefined;
  const closeWaiters: ((code: number) => void)[] = [];
  socket.on('message', (data: RawData) => {
    const bytes = new Uint8Array(data as Buffer);
    received.push({ frame: decodeRelayFrame(bytes), bytes });
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on('close', (code: number) => {
    closeCode = code;
    for (const wake of closeWaiters.splice(0)) wake(code);
  });
  const raw: RawRelaySocket = {
    socket,
    received,
    send: (frame) => socket.send(encodeRelayFrame(frame)),
    sendRaw: (data) => socket.send(data),
    next: (ms = 5_000) =>
      new Promise<RelayFrame>((resolve, reject) => {
        const attempt = (): boolean => {
          const entry = received[taken];
          if (!entry) return false;
          taken++;
          resolve(entry.frame);
          return true;
        };
        if (attempt()) return;
        const timer = setTimeout(() => reject(new Error(`no relay frame within ${ms} ms`)), ms);
        const wake = (): void => {
          if (attempt()) clearTimeout(timer);
          else waiters.push(wake);
        };
        waiters.push(wake);
      }),
    closed: (ms = 5_000) =>
      new Promise<number>((resolve, reject) => {
        if (closeCode !== undefined) {
          resolve(closeCode);
          return;
        }
        const timer = setTimeout(() => reject(new Error(`socket not closed within ${ms} ms`)), ms);
        closeWaiters.push((code) => {
          clearTimeout(timer);
          resolve(code);
        });
      }),
    close: async () => {
      if (socket.readyState === WebSocket.CLOSED) return;
      const done = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.resume(); // a paused socket would never read the peer's close frame
      socket.close();
      // A peer that never answers the close handshake: give up on it after 1 s.
      const timer = setTimeout(() => socket.terminate(), 1_000);
      await done;
      clearTimeout(timer);
    },
  };
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(raw));
    socket.once('unexpected-response', (_request, response) => {
      reject(new Error(`HTTP ${response.statusCode}`));
      socket.terminate();
    });
    socket.once('error', reject);
  });
}
