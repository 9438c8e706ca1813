/**
 * `http/request` on the TypeScript executor against a local HTTP server: buffered and
 * streamed bodies, delta framing, duplicate stream ids, validation errors, redirects.
 * Validation replies are compared with the real binary.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { RawClient, type WireMessage } from './rawClient.js';

let ours: RunningExecServer;
let binary: RunningExecServer;
let origin: Server;
let base: string;
const held: (() => void)[] = [];
const clients: RawClient[] = [];

beforeAll(async () => {
  origin = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/redirect') {
        response.writeHead(302, { location: '/echo' });
        response.end();
        return;
      }
      if (request.url === '/big') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(Buffer.alloc(3 * 1024 * 1024 + 5, 7));
        return;
      }
      if (request.url === '/held') {
        response.writeHead(200);
        response.write('first ');
        held.push(() => response.end('last'));
        return;
      }
      response.setHeader('x-multi', ['a', 'b']);
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          method: request.method,
          url: request.url,
          headers: request.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  [ours, binary] = await Promise.all([startTsExecServer(), startCodexExecServer()]);
});

afterEach(async () => {
  for (const release of held.splice(0)) release();
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

afterAll(async () => {
  await Promise.all([ours?.stop(), binary?.stop()]);
  origin.closeAllConnections();
  await new Promise<void>((resolve) => origin.close(() => resolve()));
});

async function connect(server: RunningExecServer = ours): Promise<RawClient> {
  const client = await RawClient.connect(server.url);
  clients.push(client);
  await client.handshake();
  return client;
}

const deltas = (client: RawClient, requestId: string): WireMessage[] =>
  client.notifications('http/request/bodyDelta').filter((m) => m.params?.requestId === requestId);

describe('http/request', () => {
  it('performs a buffered request with headers, body and repeated response headers', async () => {
    const client = await connect();
    const result = await client.call<{
      status: number;
      headers: { name: string; value: string }[];
      bodyBase64: string;
    }>('http/request', {
      method: 'POST',
      url: `${base}/echo`,
      headers: [{ name: 'X-Custom', value: 'yes' }],
      bodyBase64: Buffer.from('payload').toString('base64'),
      requestId: 'buffered',
    });
    expect(result.status).toBe(201);
    expect(result.headers.filter((h) => h.name === 'x-multi')).toEqual([
      { name: 'x-multi', value: 'a' },
      { name: 'x-multi', value: 'b' },
    ]);
    expect(result.headers.every((h) => h.name === h.name.toLowerCase())).toBe(true);
    const echoed = JSON.parse(Buffer.from(result.bodyBase64, 'base64').toString()) as {
      method: string;
      headers: Record<string, string>;
      body: string;
    };
    expect(echoed).toMatchObject({ method: 'POST', body: 'payload' });
    expect(echoed.headers['x-custom']).toBe('yes');
    expect(echoed.headers.accept).toBe('*/*');
  });

  it('streams the body as contiguous deltas after the response, each at most 1 MiB', async () => {
    const client = await connect();
    const id = client.post('http/request', {
      method: 'GET',
      url: `${base}/big`,
      headers: [],
      requestId: 's1',
      streamResponse: true,
    });
    await client.waitFor(
      (m) => m.method === 'http/request/bodyDelta' && m.params?.done === true,
      10_000,
    );
    const responseIndex = client.messages.findIndex((m) => m.id === id);
    const firstDelta = client.messages.findIndex((m) => m.method === 'http/request/bodyDelta');
    expect(responseIndex).toBeGreaterThanOrEqual(0);
    expect(responseIndex).toBeLessThan(firstDelta);
    expect(client.messages[responseIndex]?.result).toMatchObject({ status: 200, bodyBase64: '' });
    const frames = deltas(client, 's1');
    expect(frames.map((f) => f.params?.seq)).toEqual(frames.map((_f, index) => index + 1));
    const sizes = frames.map((f) => Buffer.from(String(f.params?.deltaBase64), 'base64').length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1024 * 1024);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(3 * 1024 * 1024 + 5);
    expect(frames.at(-1)?.params).toEqual({
      requestId: 's1',
      seq: frames.length,
      deltaBase64: '',
      done: true,
      error: null,
    });
    expect(
      frames.slice(0, -1).every((f) => f.params?.done === false && f.params?.error === null),
    ).toBe(true);
  });

  it('refuses a second stream with an active requestId, and frees it after the terminal delta', async () => {
    const client = await connect();
    await client.call('http/request', {
      method: 'GET',
      url: `${base}/held`,
      headers: [],
      requestId: 'dup',
      streamResponse: true,
    });
    const duplicate = await client.request('http/request', {
      method: 'GET',
      url: `${base}/echo`,
      headers: [],
      requestId: 'dup',
      streamResponse: true,
    });
    expect(duplicate.error).toEqual({
      code: -32602,
      message: 'http/request streamResponse requestId `dup` is already active',
    });
    for (const release of held.splice(0)) release();
    await client.waitFor((m) => m.method === 'http/request/bodyDelta' && m.params?.done === true);
    const body = deltas(client, 'dup')
      .map((f) => Buffer.from(String(f.params?.deltaBase64), 'base64').toString())
      .join('');
    expect(body).toBe('first last');
    const again = await client.request('http/request', {
      method: 'GET',
      url: `${base}/echo`,
      headers: [],
      requestId: 'dup',
      streamResponse: true,
    });
    expect(again.result).toMatchObject({ status: 201 });
  });

  it('follows redirects by default and returns the 3xx with redirectPolicy stop', async () => {
    const client = await connect();
    const followed = await client.call<{ status: number }>('http/request', {
      method: 'GET',
      url: `${base}/redirect`,
      headers: [],
      requestId: 'r1',
    });
    expect(followed.status).toBe(201);
    const stopped = await client.call<{
      status: number;
      headers: { name: string; value: string }[];
    }>('http/request', {
      method: 'GET',
      url: `${base}/redirect`,
      headers: [],
      requestId: 'r2',
      redirectPolicy: 'stop',
    });
    expect(stopped.status).toBe(302);
    expect(stopped.headers).toContainEqual({ name: 'location', value: '/echo' });
  });

  it('bounds the whole exchange, body included, with timeoutMs like the binary', async () => {
    const run = async (server: RunningExecServer) => {
      const client = await connect(server);
      const reply = await client.request('http/request', {
        method: 'GET',
        url: `${base}/held`,
        headers: [],
        requestId: 't',
        // Long enough that the headers always arrive in time on a loaded machine, so the
        // deadline lands in the body phase on both servers.
        timeoutMs: 1_500,
      });
      return reply.error;
    };
    const [mine, theirs] = await Promise.all([run(ours), run(binary)]);
    expect(mine).toEqual({
      code: -32603,
      message: 'failed to read http/request response body: error decoding response body',
    });
    expect(mine).toEqual(theirs);
  });

  it('rejects invalid requests exactly like the binary', async () => {
    const invalid = [
      { method: 'G E T', url: base, headers: [], requestId: 'v' },
      { method: 'GET', url: 'not a url', headers: [], requestId: 'v' },
      { method: 'GET', url: 'ftp://example.com/', headers: [], requestId: 'v' },
      { method: 'GET', url: base, headers: [{ name: 'bad name', value: 'x' }], requestId: 'v' },
      { method: 'GET', url: base, headers: [{ name: 'ok', value: 'a\nb' }], requestId: 'v' },
      { method: 'GET', url: 'http://127.0.0.1:1/', headers: [], requestId: 'v' },
      { method: 'GET', url: base },
    ];
    const run = async (server: RunningExecServer) => {
      const client = await connect(server);
      const replies: unknown[] = [];
      for (const params of invalid)
        replies.push((await client.request('http/request', params)).error);
      return replies;
    };
    const [mine, theirs] = await Promise.all([run(ours), run(binary)]);
    expect(mine).toEqual(theirs);
  });
});
