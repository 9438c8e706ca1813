/**
 * traceRequests: requests carry the caller's W3C trace context, other messages pass
 * unchanged, and codex exec-server serves a traced session.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { firstValueFrom, lastValueFrom, map, NEVER, switchMap, toArray } from 'rxjs';
import { ExecServerClient } from '../../src/client/execServerClient.js';
import { newTraceContext, type W3cTraceContext } from '../../src/protocol/w3cTraceContext.js';
import { requestTraceContext } from '../../src/transport/noiseTraceContext.js';
import { traceRequests } from '../../src/transport/tracedTransport.js';
import type { Transport } from '../../src/transport/transport.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

function recording(): Transport & { sent: string[] } {
  const sent: string[] = [];
  return { sent, incoming$: NEVER, send: (m) => sent.push(m), close: () => undefined };
}
describe('traceRequests', () => {
  it('adds the trace to requests only, and not when there is no valid context', () => {
    const inner = recording();
    let context: W3cTraceContext | undefined = { traceparent: PARENT, tracestate: 'rojo=1' };
    const traced = traceRequests(inner, () => context);
    traced.send(JSON.stringify({ id: 1, method: 'fs/readFile', params: { path: 'file:///x' } }));
    traced.send(JSON.stringify({ method: 'initialized', params: null }));
    traced.send(JSON.stringify({ id: 7, result: {} }));
    context = { traceparent: 'garbage' };
    traced.send(JSON.stringify({ id: 2, method: 'environment/status', params: null }));
    context = undefined;
    traced.send(JSON.stringify({ id: 3, method: 'environment/status', params: null }));
    expect(inner.sent.map((m) => JSON.parse(m))).toEqual([
      {
        id: 1,
        method: 'fs/readFile',
        params: { path: 'file:///x' },
        trace: { traceparent: PARENT, tracestate: 'rojo=1' },
      },
      { method: 'initialized', params: null },
      { id: 7, result: {} },
      { id: 2, method: 'environment/status', params: null },
      { id: 3, method: 'environment/status', params: null },
    ]);
    // The Noise relay's clear-text trace finds it.
    expect(requestTraceContext(inner.sent[0]!)).toEqual({
      traceparent: PARENT,
      tracestate: 'rojo=1',
    });
  });
});

describe('traceRequests with codex exec-server', () => {
  let codex: RunningExecServer;
  beforeAll(async () => {
    codex = await startCodexExecServer();
  }, 30_000);
  afterAll(() => codex?.stop());

  it('serves a session whose every request is traced', async () => {
    const sent: string[] = [];
    const context = newTraceContext();
    const client = await firstValueFrom(
      connectWebSocket(codex.url).pipe(
        map((transport) => {
          const recorded: Transport = {
            incoming$: transport.incoming$,
            send: (message) => {
              sent.push(message);
              transport.send(message);
            },
            close: () => transport.close(),
          };
          return traceRequests(recorded, () => context);
        }),
        switchMap((transport) =>
          ExecServerClient.connect(transport, { clientName: 'execrx-test' }),
        ),
      ),
    );
    try {
      expect(await firstValueFrom(client.environmentStatus())).toBe('ready');
      const handle = await firstValueFrom(
        client.startProcess({ argv: ['/bin/echo', 'traced'], cwd: '/' }),
      );
      const out = await lastValueFrom(handle.stdout$.pipe(toArray()));
      expect(Buffer.concat(out).toString()).toBe('traced\n');
      const requests = sent
        .map((m) => JSON.parse(m))
        .filter((m) => m.id !== undefined && m.method !== undefined);
      expect(requests.length).toBeGreaterThanOrEqual(3);
      for (const request of requests)
        expect(request.trace).toEqual({ traceparent: context.traceparent });
    } finally {
      client.close();
    }
  }, 30_000);
});
