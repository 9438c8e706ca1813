/**
 * connectWebSocket's connector options: extra-header validation (handshake headers and Origin
 * refused before anything is sent), TLS settings for wss:// (a self-signed server made with
 * openssl), and an HTTP CONNECT proxy on loopback, carrying a session to the real
 * `codex exec-server`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, switchMap } from 'rxjs';
import { WebSocketServer } from 'ws';
import { ExecServerClient } from '../../src/client/execServerClient.js';
import { connectSession } from '../../src/environment/sessionConnector.js';
import { ConnectError, ProtocolError } from '../../src/protocol/errors.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startConnectProxy, type ConnectProxy } from '../support/connectProxy.js';
import { selfSignedCertificate } from '../support/selfSignedCertificate.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

let cert: Buffer;
let key: Buffer;
let codex: RunningExecServer;

beforeAll(async () => {
  ({ cert, key } = selfSignedCertificate());
  codex = await startCodexExecServer();
}, 30_000);
afterAll(() => codex?.stop());

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    cleanups.push(() => {
      server.closeAllConnections?.();
      return new Promise((done) => server.close(() => done(undefined)));
    });
  });
}

async function startProxy(refuse?: number): Promise<ConnectProxy> {
  const proxy = await startConnectProxy(refuse);
  cleanups.push(() => proxy.close());
  return proxy;
}

/** A wss:// echo server with the self-signed certificate. */
async function startWssServer(): Promise<string> {
  const server = createHttpsServer({ cert, key });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket) => socket.on('message', (data) => socket.send(data.toString())));
  const port = await listen(server as unknown as Server);
  cleanups.push(() => wss.clients.forEach((client) => client.terminate()));
  return `wss://127.0.0.1:${port}`;
}

async function echoOnce(
  url: string,
  options: Parameters<typeof connectWebSocket>[1],
): Promise<string> {
  const transport = await firstValueFrom(connectWebSocket(url, options));
  cleanups.push(() => transport.close());
  const reply = firstValueFrom(transport.incoming$);
  transport.send('{"ping":1}');
  return reply;
}

/** Opens a session to codex exec-server with `options` and probes it. */
async function statusOver(options: Parameters<typeof connectWebSocket>[1]): Promise<string> {
  return firstValueFrom(
    connectWebSocket(codex.url, options).pipe(
      switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'execrx-test' })),
      switchMap((client) => {
        cleanups.push(() => client.close());
        return client.environmentStatus();
      }),
    ),
  );
}

describe('connectWebSocket: extra headers', () => {
  it.each([
    ['Host', 'x'],
    ['connection', 'close'],
    ['Upgrade', 'h2c'],
    ['Content-Length', '1'],
    ['Transfer-Encoding', 'chunked'],
    ['Sec-WebSocket-Key', 'abc'],
    ['sec-websocket-protocol', 'x'],
    ['Origin', 'http://example.com'],
  ])('refuses %s before connecting', async (name, value) => {
    const error = await firstValueFrom(
      connectWebSocket(codex.url, { headers: { [name]: value } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toBe(
      `exec-server protocol error: websocket header \`${name}\` is controlled by the WebSocket handshake and cannot be set`,
    );
  });

  it('refuses an invalid name or a value with a line break', async () => {
    await expect(
      firstValueFrom(connectWebSocket(codex.url, { headers: { 'bad name': 'x' } })),
    ).rejects.toThrow('websocket header name `bad name` is not a valid HTTP header name');
    await expect(
      firstValueFrom(connectWebSocket(codex.url, { headers: { 'x-token': 'a\r\nInjected: yes' } })),
    ).rejects.toThrow(
      'websocket header `x-token` has a value that is not a valid HTTP header value',
    );
  });

  it('sends an ordinary header and the session with codex exec-server works', async () => {
    const status = await statusOver({ headers: { 'x-execrx-test': 'yes' } });
    expect(status).toBe('ready');
  });
});

describe('connectWebSocket: TLS', () => {
  it('trusts a server certificate given as `tls.ca`, and refuses it otherwise', async () => {
    const url = await startWssServer();
    expect(await echoOnce(url, { tls: { ca: cert } })).toBe('{"ping":1}');
    const refused = await firstValueFrom(connectWebSocket(url)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as Error).message).toMatch(/self[- ]signed certificate/);
  });
});

describe('connectWebSocket: HTTP proxy', () => {
  it("an environment's WebSocket params carry the proxy to every connect", async () => {
    const proxy = await startProxy();
    const { client } = await firstValueFrom(
      connectSession({ kind: 'websocket', url: codex.url, proxy: proxy.url }),
    );
    cleanups.push(() => client.close());
    expect(await firstValueFrom(client.environmentStatus())).toBe('ready');
    expect(proxy.connects.map((c) => c.target)).toEqual([codex.url.replace('ws://', '')]);
  });

  it('tunnels a session to codex exec-server through CONNECT, with credentials from the URL', async () => {
    const proxy = await startProxy();
    const proxyUrl = proxy.url.replace('http://', 'http://user:p%40ss@');
    const status = await statusOver({ proxy: proxyUrl });
    expect(status).toBe('ready');
    expect(proxy.connects).toEqual([
      {
        target: codex.url.replace('ws://', ''),
        auth: `Basic ${Buffer.from('user:p@ss').toString('base64')}`,
      },
    ]);
  });

  it('runs TLS inside the tunnel for wss://', async () => {
    const proxy = await startProxy();
    const url = await startWssServer();
    expect(await echoOnce(url, { proxy: proxy.url, tls: { ca: cert } })).toBe('{"ping":1}');
    expect(proxy.connects).toHaveLength(1);
  });

  it('fails the connect with the proxy status when CONNECT is refused, or the proxy is down', async () => {
    const proxy = await startProxy(407);
    const refused = await firstValueFrom(connectWebSocket(codex.url, { proxy: proxy.url })).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as Error).message).toContain('refused CONNECT');
    expect((refused as Error).message).toContain('HTTP 407');
    const closed = createHttpServer();
    const port = await listen(closed);
    await new Promise((done) => closed.close(done));
    const down = await firstValueFrom(
      connectWebSocket(codex.url, { proxy: `http://127.0.0.1:${port}` }),
    ).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(ConnectError);
    expect((down as Error).message).toContain(`cannot reach proxy 127.0.0.1:${port}`);
  });
});
