/**
 * A raw WebSocket JSON client for executor specs: no rpc/client layer involved, so the tests
 * see exactly what goes over the wire. Every wait is bounded.
 */
import WebSocket from 'ws';

export type WireMessage = Record<string, unknown> & {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
};

const DEFAULT_WAIT_MS = 5_000;

export class RawClient {
  readonly messages: WireMessage[] = [];
  private readonly listeners = new Set<() => void>();
  private nextId = 1;
  private closedFlag = false;
  readonly closed: Promise<void>;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()) as WireMessage);
      for (const listener of [...this.listeners]) listener();
    });
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.closedFlag = true;
        for (const listener of [...this.listeners]) listener();
        resolve();
      }),
    );
    socket.on('error', () => undefined);
  }

  /** `options`: e.g. the `origin` a console pass-through requires (spec/cli/consoleEnvironment.spec.ts). */
  static async connect(url: string, options: WebSocket.ClientOptions = {}): Promise<RawClient> {
    const socket = new WebSocket(url, options);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new RawClient(socket);
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  sendRaw(text: string | Buffer, binary = false): void {
    this.socket.send(text, { binary });
  }

  send(message: object): void {
    this.sendRaw(JSON.stringify(message));
  }

  /** Sends a request with the next integer id; returns that id. */
  post(method: string, params: unknown = null): number {
    const id = this.nextId++;
    this.send({ id, method, params });
    return id;
  }

  notify(method: string, params: unknown = {}): void {
    this.send({ method, params });
  }

  /** Resolves with the first message (already received or future) matching `predicate`. */
  waitFor(
    predicate: (message: WireMessage) => boolean,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<WireMessage> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.messages.find(predicate);
        if (found) {
          finish();
          resolve(found);
          return true;
        }
        if (this.closedFlag) {
          finish();
          reject(new Error('connection closed while waiting'));
          return true;
        }
        return false;
      };
      const finish = (): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      const listener = (): void => void check();
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(`timed out waiting; received: ${JSON.stringify(this.messages).slice(0, 2000)}`),
        );
      }, timeoutMs);
      this.listeners.add(listener);
      check();
    });
  }

  response(id: number | string, timeoutMs?: number): Promise<WireMessage> {
    return this.waitFor(
      (m) => m.id === id && (m.result !== undefined || m.error !== undefined),
      timeoutMs,
    );
  }

  async request(method: string, params: unknown = null, timeoutMs?: number): Promise<WireMessage> {
    return this.response(this.post(method, params), timeoutMs);
  }

  /** Result of a request that must succeed. */
  async call<T = Record<string, unknown>>(
    method: string,
    params: unknown = null,
    timeoutMs?: number,
  ): Promise<T> {
    const reply = await this.request(method, params, timeoutMs);
    if (reply.error) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
    return reply.result as T;
  }

  /** initialize + initialized; returns the session id. */
  async handshake(resumeSessionId: string | null = null): Promise<string> {
    const result = await this.call<{ sessionId: string }>('initialize', {
      clientName: 'spec',
      resumeSessionId,
    });
    this.notify('initialized', {});
    return result.sessionId;
  }

  notifications(method: string, processId?: string): WireMessage[] {
    return this.messages.filter(
      (m) =>
        m.method === method &&
        m.id === undefined &&
        (processId === undefined || m.params?.processId === processId),
    );
  }

  /** Every process notification for `processId`, in arrival order. */
  processEvents(processId: string): WireMessage[] {
    return this.messages.filter(
      (m) =>
        typeof m.method === 'string' &&
        m.method.startsWith('process/') &&
        m.id === undefined &&
        m.params?.processId === processId,
    );
  }

  waitClosedNotification(processId: string, timeoutMs?: number): Promise<WireMessage> {
    return this.waitFor(
      (m) => m.method === 'process/closed' && m.params?.processId === processId,
      timeoutMs,
    );
  }

  close(): Promise<void> {
    if (!this.closedFlag) this.socket.close();
    return this.closed;
  }

  /** Drops the TCP connection without a close handshake. */
  terminate(): Promise<void> {
    this.socket.terminate();
    return this.closed;
  }
}

/** Concatenated decoded output of a process's `process/output` notifications. */
export function outputText(client: RawClient, processId: string): string {
  return client
    .notifications('process/output', processId)
    .map((m) => Buffer.from(m.params?.chunk as string, 'base64').toString('utf8'))
    .join('');
}

export const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

export function startParams(
  processId: string,
  argv: string[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    processId,
    argv,
    cwd: 'file:///tmp',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    tty: false,
    arg0: null,
    envPolicy: null,
    sandbox: null,
    ...extra,
  };
}
