/**
 * Test helper: a minimal registry + rendezvous on 127.0.0.1 for the `--remote` mode. The
 * registry records `/register` and `/validate`; the rendezvous keeps the executor's socket
 * (`/relay/<n>` for registration n) and routes harness sockets (`/harness`) to it by the stream
 * id each harness claims with its `resume` frame.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import type { NoiseChannelPublicKeyJson } from '../../../src/noise/index.js';
import { decodeRelayFrame, encodeRelayFrame, resetFrame } from '../../../src/relay/index.js';
import type { NoiseRendezvousConnectBundle } from '../../../src/registry/index.js';

export interface RecordedCall {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

export class MockRendezvous {
  readonly registrations: RecordedCall[] = [];
  readonly validations: RecordedCall[] = [];
  readonly upgrades: Array<{ path: string; status: number; headers: IncomingMessage['headers'] }> =
    [];
  /** Answer of `/validate`. */
  valid = true;
  executorSocket: WebSocket | undefined;
  private current = 0;
  private expired = false;
  private executorKey: NoiseChannelPublicKeyJson | undefined;
  private readonly harnesses = new Map<string, WebSocket>();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  private connectedWaiters: Array<(socket: WebSocket) => void> = [];

  private constructor(
    private readonly server: Server,
    readonly environmentId: string,
  ) {}

  static async start(environmentId = 'remote-env'): Promise<MockRendezvous> {
    const server = createServer();
    const mock = new MockRendezvous(server, environmentId);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '';
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<
          string,
          unknown
        >;
        const call = { path, headers: request.headers, body };
        const prefix = `/cloud/environment/${environmentId}/`;
        if (path === `${prefix}register`) {
          mock.registrations.push(call);
          mock.executorKey = body.executor_public_key as NoiseChannelPublicKeyJson;
          mock.current += 1;
          mock.expired = false;
          response.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              environment_id: environmentId,
              url: `${mock.baseWsUrl}/relay/${mock.current}?role=environment&sig=secret`,
              security_profile: 'noise_hybrid_ik_v1',
              executor_registration_id: `registration-${mock.current}`,
            }),
          );
        } else if (path === `${prefix}validate`) {
          mock.validations.push(call);
          response
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ valid: mock.valid }));
        } else {
          response.writeHead(404).end();
        }
      });
    });
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) =>
      mock.upgrade(request, socket, head),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return mock;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private get baseWsUrl(): string {
    return this.baseUrl.replace('http:', 'ws:');
  }

  /** A connect bundle for the current registration (what `/connect` would answer). */
  bundle(authorization = 'harness-authorization'): NoiseRendezvousConnectBundle {
    if (!this.executorKey) throw new Error('nobody registered yet');
    return {
      websocketUrl: `${this.baseWsUrl}/harness?role=harness&sig=secret`,
      environmentId: this.environmentId,
      executorRegistrationId: `registration-${this.current}`,
      executorPublicKey: this.executorKey,
      harnessKeyAuthorization: authorization,
    };
  }

  /** Resolves with the next executor socket that attaches. */
  nextExecutorSocket(): Promise<WebSocket> {
    return new Promise((resolve) => this.connectedWaiters.push(resolve));
  }

  /** The current rendezvous URL now answers 404 (the executor must register again). */
  expireRegistration(): void {
    this.expired = true;
  }

  /** Drops the executor's socket abruptly. */
  dropExecutor(): void {
    this.executorSocket?.terminate();
  }

  async stop(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    const path = (request.url ?? '').split('?')[0] ?? '';
    const refuse = (status: number): void => {
      this.upgrades.push({ path, status, headers: request.headers });
      socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    };
    if (path === '/harness') {
      this.wss.handleUpgrade(request, socket, head, (ws) => this.attachHarness(ws));
      return;
    }
    if (path !== `/relay/${this.current}` || this.expired) return refuse(404);
    this.upgrades.push({ path, status: 101, headers: request.headers });
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      this.executorSocket = ws;
      ws.on('message', (data: Buffer) => {
        const frame = decodeRelayFrame(data);
        this.harnesses.get(frame.streamId)?.send(data);
      });
      for (const waiter of this.connectedWaiters.splice(0)) waiter(ws);
    });
  }

  private attachHarness(ws: WebSocket): void {
    const claimed = new Set<string>();
    ws.on('message', (data: Buffer) => {
      const frame = decodeRelayFrame(data);
      if (frame.kind === 'resume') {
        claimed.add(frame.streamId);
        this.harnesses.set(frame.streamId, ws);
      }
      this.executorSocket?.send(data);
    });
    ws.on('close', () => {
      // The rendezvous tells the executor when a harness goes away.
      for (const streamId of claimed) {
        this.harnesses.delete(streamId);
        if (this.executorSocket?.readyState === WebSocket.OPEN) {
          this.executorSocket.send(encodeRelayFrame(resetFrame(streamId, 'harness_disconnected')));
        }
      }
    });
  }
}
