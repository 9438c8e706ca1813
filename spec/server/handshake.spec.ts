/**
 * Connection processing of the TypeScript executor over raw WebSocket JSON: malformed input,
 * unknown methods, handshake gating, connection-closing messages. The same scripted exchange
 * runs against the real codex 0.169.0 binary and the replies are compared.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCodexExecServer } from '../support/codexExecServer.js';
import type { RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { RawClient, type WireMessage } from './rawClient.js';

let ours: RunningExecServer;
let binary: RunningExecServer;

beforeAll(async () => {
  [ours, binary] = await Promise.all([startTsExecServer(), startCodexExecServer()]);
});

afterAll(async () => {
  await Promise.all([ours?.stop(), binary?.stop()]);
});

/** Messages sent in order; every request's reply is collected (ids are unique). */
const SCRIPT: (string | object)[] = [
  'not json',
  '[1,2]',
  '{"id":1,"method":"environment/status"',
  '{"id":2,"id":3,"method":"environment/status"}',
  '',
  '{"a":1,}',
  `${'['.repeat(200)}${']'.repeat(200)}`,
  '{"id":1}',
  '{"id":1,"method":5}',
  '"str"',
  '{"result":1}',
  '{"id":1.5,"method":"x"}',
  '{"id":null,"method":"x"}',
  '{"id":1,"method":"x","params":{"a":1,"a":2}}',
  { id: 4, method: 'environment/info', params: null },
  { id: 5, method: 'no/such/method', params: null },
  { id: 6, method: 'process/start', params: {} },
  { id: 7, method: 'fs/readFile', params: { path: 'file:///etc/hostname' } },
  { id: 8, method: 'initialize', params: { clientName: 'spec', resumeSessionId: null } },
  { id: 9, method: 'initialize', params: { clientName: 'spec', resumeSessionId: null } },
  { id: 10, method: 'environment/status', params: null },
  { id: 11, method: 'process/read', params: { processId: 'x' } },
  {
    id: 12,
    method: 'http/request',
    params: { method: 'GET', url: 'http://127.0.0.1:1/', requestId: 'r' },
  },
  { method: 'initialized', params: {} },
  { id: 13, method: 'environment/status', params: null },
  { id: 14, method: 'environment/status' },
  { id: 15, method: 'environment/status', params: {} },
  { id: 'text-id', method: 'environment/status', params: null },
  { id: 16, method: 'fs/readFile', params: { path: '/etc/hostname' } },
  { id: 17, method: 'fs/readFile', params: {} },
  { id: 18, method: 'process/start', params: { processId: 5 } },
  { id: 19, method: 'process/start', params: { processId: 'p', argv: 'sh' } },
  { id: 20, method: 'process/signal', params: { processId: 'p', signal: 'kill' } },
  { id: 21, method: 'process/read', params: { processId: 'p', afterSeq: -1 } },
  { id: 22, method: 'no/such/method', params: null },
];
const REQUEST_IDS = SCRIPT.flatMap((m) =>
  typeof m === 'object' && 'id' in m ? [m.id as number | string] : [],
);

async function runScript(url: string): Promise<WireMessage[]> {
  const client = await RawClient.connect(url);
  try {
    for (const message of SCRIPT) {
      if (typeof message === 'string') client.sendRaw(message);
      else client.send(message);
    }
    await Promise.all(REQUEST_IDS.map((id) => client.response(id)));
    await client.waitFor((m) => m.id === -1 && (m.error?.message ?? '').includes('duplicate'));
    return client.messages;
  } finally {
    await client.close();
  }
}

/** Replaces what legitimately differs between executors (peer ports, session ids, env info). */
function normalize(message: WireMessage): unknown {
  const text = JSON.stringify(message)
    .replace(/exec-server websocket 127\.0\.0\.1:\d+/g, 'exec-server websocket PEER')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'SESSION');
  const value = JSON.parse(text) as WireMessage;
  if (value.result && typeof value.result === 'object' && 'environmentInfo' in value.result) {
    return { id: value.id, resultKeys: Object.keys(value.result).sort() };
  }
  return value;
}

describe('connection processing (ours vs codex 0.169.0)', () => {
  it('answers the scripted exchange exactly like the binary', async () => {
    const [ourReplies, binaryReplies] = await Promise.all([
      runScript(ours.url),
      runScript(binary.url),
    ]);
    const byId = (replies: WireMessage[]) =>
      new Map(replies.filter((m) => m.id !== -1).map((m) => [m.id, normalize(m)]));
    const malformed = (replies: WireMessage[]) => replies.filter((m) => m.id === -1).map(normalize);
    expect(malformed(ourReplies)).toEqual(malformed(binaryReplies));
    const ourById = byId(ourReplies);
    const binaryById = byId(binaryReplies);
    for (const id of REQUEST_IDS) {
      if (id === 12) continue; // gating error for both, compared below without the family wording risk
      expect({ id, reply: ourById.get(id) }).toEqual({ id, reply: binaryById.get(id) });
    }
    expect(ourById.get(12)).toEqual(binaryById.get(12));
  });
});

describe('connection processing (ours)', () => {
  it('answers malformed JSON with id -1 and keeps serving', async () => {
    const client = await RawClient.connect(ours.url);
    client.sendRaw('{oops');
    const reply = await client.waitFor((m) => m.id === -1);
    expect(reply.error?.code).toBe(-32600);
    expect(reply.error?.message).toMatch(
      /^failed to parse websocket JSON-RPC message from exec-server websocket 127\.0\.0\.1:\d+: key must be a string at line 1 column 2$/,
    );
    expect(Object.keys(reply)).toEqual(['error', 'id']);
    expect(await client.handshake()).toMatch(/^[0-9a-f-]{36}$/);
    await client.close();
  });

  it('accepts binary frames carrying JSON and never sends a jsonrpc member', async () => {
    const client = await RawClient.connect(ours.url);
    client.sendRaw(
      Buffer.from(JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'x' } })),
      true,
    );
    const reply = await client.response(1);
    expect(reply).not.toHaveProperty('jsonrpc');
    expect(Object.keys(reply)).toEqual(['id', 'result']);
    await client.close();
  });

  it('returns the session id and environment info from initialize, then serves environment/info', async () => {
    const client = await RawClient.connect(ours.url);
    const init = await client.call<{ sessionId: string; environmentInfo: Record<string, unknown> }>(
      'initialize',
      {
        clientName: 'spec',
        resumeSessionId: null,
      },
    );
    client.notify('initialized');
    expect(init.sessionId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const info = await client.call<Record<string, unknown>>('environment/info', null);
    expect(info).toEqual(init.environmentInfo);
    expect(info.executorVersion).toMatch(/^execrx \d+\.\d+\.\d+/);
    expect(info.platformOs).toBe('linux');
    expect(String(info.cwd)).toMatch(/^file:\/\/\//);
    const capabilities = info.capabilities as Record<string, boolean>;
    expect(Object.keys(capabilities)).toHaveLength(15);
    expect(capabilities.networkProxyLaunch).toBe(false);
    expect(capabilities.fileWriteStreaming).toBe(true);
    expect(await client.call('environment/status', null)).toEqual({ status: 'ready' });
    await client.close();
  });

  it('has the same environment/info key set as the binary', async () => {
    const infos = await Promise.all(
      [ours, binary].map(async (server) => {
        const client = await RawClient.connect(server.url);
        await client.handshake();
        const info = await client.call<Record<string, unknown>>('environment/info', null);
        await client.close();
        return info;
      }),
    );
    const [ourInfo, binaryInfo] = infos as [Record<string, unknown>, Record<string, unknown>];
    // providerId is the binary's own identity hash; this executor does not claim one.
    const binaryKeys = Object.keys(binaryInfo).filter((key) => key !== 'providerId');
    expect(Object.keys(ourInfo).sort()).toEqual(binaryKeys.sort());
    expect(Object.keys(ourInfo.capabilities as object).sort()).toEqual(
      Object.keys(binaryInfo.capabilities as object).sort(),
    );
  });

  it.each([
    ['an unknown notification', { method: 'no/such/notification', params: {} }],
    ['an unexpected client response', { id: 99, result: {} }],
    ['an unexpected client error', { id: 99, error: { code: 1, message: 'x' } }],
  ])('closes the connection on %s', async (_name, message) => {
    const client = await RawClient.connect(ours.url);
    await client.handshake();
    client.send(message);
    await client.closed;
    expect(client.isClosed).toBe(true);
  });

  it('closes the connection on initialized before initialize', async () => {
    const client = await RawClient.connect(ours.url);
    client.notify('initialized');
    await client.closed;
    expect(client.isClosed).toBe(true);
  });

  it('allows initialize again after a failed resume', async () => {
    const client = await RawClient.connect(ours.url);
    const failed = await client.request('initialize', {
      clientName: 'x',
      resumeSessionId: 'missing',
    });
    expect(failed.error).toEqual({ code: -32600, message: 'unknown session id missing' });
    expect(await client.handshake()).toMatch(/^[0-9a-f-]{36}$/);
    await client.close();
  });
});
