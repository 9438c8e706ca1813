/**
 * The executor's listeners: the WebSocket port's HTTP routes (/readyz, Origin refusal),
 * keepalive pings, `--listen` parsing, and the stdio mode on in-memory streams.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { parseListenUrl, startExecServer, type ExecServer } from '../../src/server/index.js';
import { RawClient } from './rawClient.js';

const servers: ExecServer[] = [];

async function start(options: Parameters<typeof startExecServer>[0] = {}): Promise<ExecServer> {
  const server = await startExecServer(options);
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const httpBase = (server: ExecServer): string => server.url.replace('ws://', 'http://');

describe('WebSocket listener', () => {
  it('binds an ephemeral loopback port and reports ws://IP:PORT', async () => {
    const server = await start();
    expect(server.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toBe('ws://127.0.0.1:0');
  });

  it('answers GET /readyz with 200 and an empty body', async () => {
    const server = await start();
    const response = await fetch(`${httpBase(server)}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('refuses any request with an Origin header with 403, upgrades included', async () => {
    const server = await start();
    const response = await fetch(`${httpBase(server)}/readyz`, {
      headers: { Origin: 'http://evil.example' },
    });
    expect(response.status).toBe(403);
    const status = await new Promise<number>((resolve) => {
      const socket = new WebSocket(server.url, { headers: { Origin: 'http://evil.example' } });
      socket.on('unexpected-response', (_request, res) => {
        resolve(res.statusCode ?? 0);
        socket.terminate();
      });
      socket.on('error', () => undefined);
    });
    expect(status).toBe(403);
  });

  it('answers unknown paths with 404 and a plain GET / with 400', async () => {
    const server = await start();
    expect((await fetch(`${httpBase(server)}/elsewhere`)).status).toBe(404);
    const root = await fetch(`${httpBase(server)}/`);
    expect(root.status).toBe(400);
    expect(await root.text()).toBe("Connection header did not include 'upgrade'");
  });

  it('pings connected sockets at the keepalive interval', async () => {
    const server = await start({ keepaliveIntervalMs: 50 });
    const socket = new WebSocket(server.url);
    await new Promise((resolve) => socket.once('open', resolve));
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no ping')), 2_000);
      socket.once('ping', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
    socket.close();
  });

  it('closes every connection on close()', async () => {
    const server = await start();
    const client = await RawClient.connect(server.url);
    await client.handshake();
    await server.close();
    await client.closed;
    expect(client.isClosed).toBe(true);
    await expect(fetch(`${httpBase(server)}/readyz`)).rejects.toThrow();
  });
});

describe('parseListenUrl', () => {
  it('accepts ws://IP:PORT and stdio', () => {
    expect(parseListenUrl('ws://127.0.0.1:8765')).toEqual({
      kind: 'websocket',
      host: '127.0.0.1',
      port: 8765,
    });
    expect(parseListenUrl('ws://[::1]:0')).toEqual({ kind: 'websocket', host: '::1', port: 0 });
    expect(parseListenUrl('stdio')).toEqual({ kind: 'stdio' });
    expect(parseListenUrl('stdio://')).toEqual({ kind: 'stdio' });
  });

  it('rejects other forms with the binary wording', () => {
    expect(() => parseListenUrl('http://127.0.0.1:1')).toThrow(
      'unsupported --listen URL `http://127.0.0.1:1`; expected `ws://IP:PORT` or `stdio`',
    );
    expect(() => parseListenUrl('ws://localhost:1')).toThrow(
      'invalid websocket --listen URL `ws://localhost:1`; expected `ws://IP:PORT`',
    );
    expect(() => parseListenUrl('ws://127.0.0.1')).toThrow('invalid websocket --listen URL');
  });
});

describe('stdio listener', () => {
  it('serves newline-delimited JSON and shuts down at end of input', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    output.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        lines.push(JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    });
    const server = await start({ listen: 'stdio', input, output });
    expect(server.url).toBe('stdio');
    input.write('garbage\n');
    input.write(
      '{"id":1,"method":"initialize","params":{"clientName":"x","resumeSessionId":null}}\r\n\n',
    );
    input.write(
      '{"method":"initialized","params":{}}\n{"id":2,"method":"environment/status","params":null}\n',
    );
    const deadline = Date.now() + 5_000;
    while (lines.length < 3 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lines[0]).toEqual({
      error: {
        code: -32600,
        message:
          'failed to parse JSON-RPC message from exec-server stdio: expected value at line 1 column 1',
      },
      id: -1,
    });
    expect(lines[1]).toMatchObject({ id: 1, result: { sessionId: expect.any(String) } });
    expect(lines[2]).toEqual({ id: 2, result: { status: 'ready' } });
    input.end();
    await server.closed;
    expect(server.executor.sessionCount).toBe(0);
  });
});
