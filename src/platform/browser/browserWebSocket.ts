/**
 * The browser's global `WebSocket` behind the seam's `ws`-shaped interface. Browsers send no
 * Pings (they answer the server's), cannot set upgrade headers, always send an `Origin`, and
 * frame each message themselves: a fragmented send is gathered and sent whole at `fin`.
 */
import { concatBytes } from '../bytes.js';
import type { PlatformWebSocket, WebSocketEvents, WebSocketOpenOptions } from '../platform.js';

/** The slice of the DOM `WebSocket` used here (the project compiles without the DOM lib). */
interface DomWebSocket {
  readonly readyState: number;
  binaryType: string;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: DomEvent) => void): void;
}
interface DomEvent {
  data?: unknown;
  code?: number;
  reason?: string;
}
type DomWebSocketConstructor = new (url: string) => DomWebSocket;

type Listener = (...args: never[]) => void;

export class BrowserWebSocket implements PlatformWebSocket {
  private readonly socket: DomWebSocket;
  private readonly listeners = new Map<keyof WebSocketEvents, Set<Listener>>();
  private readonly onceWrappers = new Map<Listener, Listener>();
  private fragments: Uint8Array[] = [];

  constructor(url: string, options: WebSocketOpenOptions = {}) {
    if (options.headers !== undefined && Object.keys(options.headers).length > 0) {
      throw new TypeError('a browser WebSocket cannot send extra upgrade headers');
    }
    if (options.tls !== undefined || options.proxy !== undefined) {
      throw new TypeError('a browser WebSocket takes its TLS and proxy settings from the browser');
    }
    const Constructor = (globalThis as { WebSocket?: DomWebSocketConstructor }).WebSocket;
    if (Constructor === undefined) throw new TypeError('this runtime has no global WebSocket');
    this.socket = new Constructor(url);
    this.socket.binaryType = 'arraybuffer';
    this.socket.addEventListener('open', () => this.emit('open'));
    this.socket.addEventListener('message', (event) => {
      const data = event.data;
      if (typeof data === 'string') this.emit('message', data, false);
      else if (data instanceof ArrayBuffer) this.emit('message', new Uint8Array(data), true);
    });
    // The DOM reports no detail with `error`; the `close` that follows carries the code.
    this.socket.addEventListener('error', () =>
      this.emit('error', new Error('WebSocket error (the browser gives no detail)')),
    );
    this.socket.addEventListener('close', (event) =>
      this.emit('close', event.code ?? 1006, new TextEncoder().encode(event.reason ?? '')),
    );
  }

  get readyState(): number {
    return this.socket.readyState;
  }

  on<E extends keyof WebSocketEvents>(event: E, listener: WebSocketEvents[E]): this {
    let set = this.listeners.get(event);
    if (set === undefined) this.listeners.set(event, (set = new Set()));
    set.add(listener as Listener);
    return this;
  }

  once<E extends keyof WebSocketEvents>(event: E, listener: WebSocketEvents[E]): this {
    const wrapper = ((...args: never[]) => {
      this.off(event, listener);
      (listener as Listener)(...args);
    }) as Listener;
    this.onceWrappers.set(listener as Listener, wrapper);
    return this.on(event, wrapper as WebSocketEvents[E]);
  }

  off<E extends keyof WebSocketEvents>(event: E, listener: WebSocketEvents[E]): this {
    const wrapper = this.onceWrappers.get(listener as Listener);
    if (wrapper !== undefined) this.onceWrappers.delete(listener as Listener);
    this.listeners.get(event)?.delete(wrapper ?? (listener as Listener));
    return this;
  }

  send(
    data: string | Uint8Array,
    options?: { binary?: boolean; fin?: boolean },
    callback?: (error?: Error) => void,
  ): void {
    try {
      if (options?.fin === false || this.fragments.length > 0) {
        this.fragments.push(typeof data === 'string' ? new TextEncoder().encode(data) : data);
        if (options?.fin === false) return;
        const whole = concatBytes(...this.fragments);
        this.fragments = [];
        this.socket.send(new TextDecoder().decode(whole));
      } else {
        this.socket.send(data);
      }
      callback?.();
    } catch (error) {
      callback?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  ping(): void {
    // Browsers cannot send Pings.
  }

  close(code?: number, reason?: string): void {
    this.socket.close(code, reason);
  }

  terminate(): void {
    this.socket.close();
  }

  /** The DOM WebSocket reads whatever arrives; it cannot be paused. */
  pause(): void {}
  resume(): void {}

  private emit<E extends keyof WebSocketEvents>(
    event: E,
    ...args: Parameters<WebSocketEvents[E]>
  ): void {
    const set = this.listeners.get(event);
    if (set === undefined) return;
    for (const listener of [...set]) (listener as (...a: unknown[]) => void)(...args);
  }
}
