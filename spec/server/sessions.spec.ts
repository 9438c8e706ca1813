/**
 * Sessions on the TypeScript executor: a dropped connection leaves its session detached with
 * processes running and output retained; `resumeSessionId` re-attaches it; -32010 while it is
 * still attached; unknown or expired ids are refused; expiry kills the processes.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer, type TsExecServerOptions } from '../support/tsExecServer.js';
import { b64, RawClient, startParams } from './rawClient.js';

const servers: RunningExecServer[] = [];
const clients: RawClient[] = [];

async function server(options: TsExecServerOptions = {}): Promise<RunningExecServer> {
  const started = await startTsExecServer(options);
  servers.push(started);
  return started;
}

async function connect(target: RunningExecServer): Promise<RawClient> {
  const client = await RawClient.connect(target.url);
  clients.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

describe('detach and resume', () => {
  it('keeps processes running while detached and replays their output after resume', async () => {
    const target = await server();
    const first = await connect(target);
    const sessionId = await first.handshake();
    await first.call(
      'process/start',
      startParams('p', ['sh', '-c', 'echo before; sleep 0.4; echo after']),
    );
    await first.waitFor((m) => m.method === 'process/output');
    await first.terminate();

    const second = await connect(target);
    expect(await second.handshake(sessionId)).toBe(sessionId);
    // Notifications produced after the resume reach the new connection.
    await second.waitClosedNotification('p');
    const read = await second.call<{
      chunks: { seq: number; chunk: string }[];
      nextSeq: number;
      closed: boolean;
    }>('process/read', { processId: 'p', afterSeq: 0, maxBytes: null, waitMs: 0 });
    expect(read.chunks.map((c) => [c.seq, c.chunk])).toEqual([
      [1, b64('before\n')],
      [2, b64('after\n')],
    ]);
    expect(read.nextSeq).toBe(5);
    expect(read.closed).toBe(true);
  });

  it('answers -32010 while the session is attached elsewhere, then resumes once it is free', async () => {
    const target = await server();
    const first = await connect(target);
    const sessionId = await first.handshake();
    const second = await connect(target);
    const refused = await second.request('initialize', {
      clientName: 'spec',
      resumeSessionId: sessionId,
    });
    expect(refused.error).toEqual({
      code: -32010,
      message: `session ${sessionId} is already attached to another connection`,
    });
    await first.close();
    // The executor notices the close asynchronously; retry like the client's recovery does.
    let resumed;
    for (let attempt = 0; attempt < 50; attempt += 1) {
      resumed = await second.request('initialize', {
        clientName: 'spec',
        resumeSessionId: sessionId,
      });
      if (!resumed.error) break;
      expect(resumed.error.code).toBe(-32010);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(resumed?.result).toMatchObject({ sessionId });
  });

  it('refuses unknown session ids with -32600', async () => {
    const target = await server();
    const client = await connect(target);
    const reply = await client.request('initialize', {
      clientName: 'spec',
      resumeSessionId: 'nope',
    });
    expect(reply.error).toEqual({ code: -32600, message: 'unknown session id nope' });
  });

  it('forgets a detached session after its TTL and kills its processes', async () => {
    const target = await server({ detachedSessionTtlMs: 300 });
    const first = await connect(target);
    const sessionId = await first.handshake();
    await first.call('process/start', startParams('long', ['sh', '-c', 'echo $$; sleep 30']));
    const pidMessage = await first.waitFor((m) => m.method === 'process/output');
    const pid = Number(Buffer.from(String(pidMessage.params?.chunk), 'base64').toString().trim());
    await first.terminate();
    await new Promise((resolve) => setTimeout(resolve, 700));
    const second = await connect(target);
    const reply = await second.request('initialize', {
      clientName: 'spec',
      resumeSessionId: sessionId,
    });
    expect(reply.error).toEqual({ code: -32600, message: `unknown session id ${sessionId}` });
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('does not share processes between sessions', async () => {
    const target = await server();
    const a = await connect(target);
    const b = await connect(target);
    await a.handshake();
    await b.handshake();
    await a.call('process/start', startParams('same-id', ['true']));
    expect(await b.call('process/start', startParams('same-id', ['true']))).toEqual({
      processId: 'same-id',
      sandboxType: 'none',
    });
  });

  it('kills every child when the server stops', async () => {
    const target = await startTsExecServer();
    const client = await connect(target);
    await client.handshake();
    await client.call('process/start', startParams('s', ['sh', '-c', 'echo $$; sleep 30']));
    const pidMessage = await client.waitFor((m) => m.method === 'process/output');
    const pid = Number(Buffer.from(String(pidMessage.params?.chunk), 'base64').toString().trim());
    await target.stop();
    await client.closed;
    for (let attempt = 0; attempt < 40; attempt += 1) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
