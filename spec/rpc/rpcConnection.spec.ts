import { afterEach, describe, expect, it } from '@jest/globals';
import { firstValueFrom, NEVER, of, Subject, throwError, toArray, type Subscription } from 'rxjs';
import {
  DisconnectedError,
  ExecServerError,
  MessageTooLargeError,
  ProtocolError,
  ServerError,
} from '../../src/protocol/errors.js';
import { RpcConnection, type RpcConnectionOptions } from '../../src/rpc/rpcConnection.js';
import type { Transport } from '../../src/transport/transport.js';
import { createTransportPair, type PairEnd } from '../support/transportPair.js';

interface Outcome {
  values: unknown[];
  error?: unknown;
  completed: boolean;
}

/** Subscribes and records what happens, so tests can look at the outcome at any point. */
function record(source: ReturnType<RpcConnection['request']>): {
  outcome: Outcome;
  subscription: Subscription;
} {
  const outcome: Outcome = { values: [], completed: false };
  const subscription = source.subscribe({
    next: (value) => outcome.values.push(value),
    error: (error: unknown) => (outcome.error = error),
    complete: () => (outcome.completed = true),
  });
  return { outcome, subscription };
}

function parsed(end: PairEnd): unknown[] {
  return end.sent.map((text) => JSON.parse(text) as unknown);
}

function setup(options?: RpcConnectionOptions): {
  rpc: RpcConnection;
  client: PairEnd;
  server: PairEnd;
} {
  const { client, server } = createTransportPair();
  server.incoming$.subscribe({ error: () => undefined });
  const rpc = new RpcConnection(client, options);
  return { rpc, client, server };
}

let current: RpcConnection | undefined;
afterEach(() => current?.close());

describe('RpcConnection requests', () => {
  it('sends integer ids from 1 without a jsonrpc member and with params always present', () => {
    const { rpc, client } = setup();
    current = rpc;
    record(rpc.request('initialize', { clientName: 'x' }));
    record(rpc.request('environment/info', null));
    record(rpc.request('environment/status', undefined));
    rpc.notify('initialized', {});
    expect(parsed(client)).toEqual([
      { id: 1, method: 'initialize', params: { clientName: 'x' } },
      { id: 2, method: 'environment/info', params: null },
      { id: 3, method: 'environment/status', params: null },
      { method: 'initialized', params: {} },
    ]);
  });

  it('is cold: nothing is sent until subscription, and ids restart at 1 on a new connection', () => {
    const first = setup();
    const call = first.rpc.request('a', {});
    expect(first.client.sent).toHaveLength(0);
    record(call);
    record(call);
    expect(parsed(first.client).map((m) => (m as { id: number }).id)).toEqual([1, 2]);
    first.rpc.close();
    const second = setup();
    current = second.rpc;
    record(second.rpc.request('a', {}));
    expect(JSON.parse(second.client.sent[0]!)).toMatchObject({ id: 1 });
  });

  it('matches out-of-order responses by id and tolerates a jsonrpc member', () => {
    const { rpc, server } = setup();
    current = rpc;
    const one = record(rpc.request('first', {})).outcome;
    const two = record(rpc.request('second', {})).outcome;
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 2, result: { n: 2 } }));
    expect(two).toEqual({ values: [{ n: 2 }], completed: true });
    expect(one).toEqual({ values: [], completed: false });
    server.send(JSON.stringify({ id: 1, result: { n: 1 } }));
    expect(one).toEqual({ values: [{ n: 1 }], completed: true });
  });

  it('turns an error response into a ServerError with the code and message', () => {
    const { rpc, server } = setup();
    current = rpc;
    const call = record(rpc.request('fs/readFile', {})).outcome;
    server.send(
      JSON.stringify({
        id: 1,
        error: { code: -32004, message: 'No such file or directory (os error 2)' },
      }),
    );
    expect(call.error).toBeInstanceOf(ServerError);
    expect(call.error).toMatchObject({
      code: -32004,
      serverMessage: 'No such file or directory (os error 2)',
    });
  });

  it('drops the pending entry on unsubscribe and ignores the late answer', () => {
    const { rpc, server } = setup({ maxPendingRequests: 1 });
    current = rpc;
    const early = record(rpc.request('slow', {}));
    early.subscription.unsubscribe();
    // The slot is free again: a second call is admitted under a limit of one.
    const next = record(rpc.request('next', {})).outcome;
    expect(next.error).toBeUndefined();
    server.send(JSON.stringify({ id: 1, result: 'late' }));
    expect(early.outcome.values).toEqual([]);
    expect(rpc.isClosed).toBe(false);
    server.send(JSON.stringify({ id: 2, result: 'ok' }));
    expect(next.values).toEqual(['ok']);
  });

  it('silently drops responses and errors with unknown ids', () => {
    const { rpc, server } = setup();
    current = rpc;
    const call = record(rpc.request('x', {})).outcome;
    server.send(JSON.stringify({ id: 99, result: {} }));
    server.send(JSON.stringify({ id: '1', result: {} }));
    server.send(JSON.stringify({ id: -1, error: { code: -32600, message: 'bad' } }));
    expect(rpc.isClosed).toBe(false);
    expect(call).toEqual({ values: [], completed: false });
  });

  it('fails a request beyond the pending limit with a ProtocolError and keeps the others', () => {
    const { rpc, server } = setup({ maxPendingRequests: 2 });
    current = rpc;
    const a = record(rpc.request('a', {})).outcome;
    record(rpc.request('b', {}));
    const c = record(rpc.request('c', {})).outcome;
    expect(c.error).toBeInstanceOf(ProtocolError);
    expect((c.error as Error).message).toBe(
      'exec-server protocol error: exec-server has reached its limit of 2 pending requests',
    );
    server.send(JSON.stringify({ id: 1, result: 1 }));
    expect(a.values).toEqual([1]);
  });

  it('fails only the call whose message the transport refuses to carry, and goes on', () => {
    const { client, server } = createTransportPair();
    const refusing: Transport = {
      incoming$: client.incoming$,
      send(message: string): void {
        if (message.length > 100) throw new MessageTooLargeError(message.length, 100);
        client.send(message);
      },
      close: () => client.close(),
    };
    const rpc = new RpcConnection(refusing);
    current = rpc;
    const big = record(rpc.request('big', { data: 'x'.repeat(200) })).outcome;
    expect(big.error).toBeInstanceOf(MessageTooLargeError);
    expect(client.sent).toEqual([]);
    const small = record(rpc.request('small', {})).outcome;
    const [request] = client.sent.map((text) => JSON.parse(text) as { id: number });
    server.send(JSON.stringify({ id: request?.id, result: 'ok' }));
    expect(small.values).toEqual(['ok']);
    expect(rpc.isClosed).toBe(false);
  });

  it('uses 1024 as the default pending limit', () => {
    const { rpc } = setup();
    current = rpc;
    for (let i = 0; i < 1024; i += 1) record(rpc.request('x', {}));
    const over = record(rpc.request('x', {})).outcome;
    expect((over.error as Error).message).toContain('its limit of 1024 pending requests');
  });
});

describe('RpcConnection close', () => {
  it('delivers everything received before the end, then fails pending calls', () => {
    const { rpc, server } = setup();
    const log: string[] = [];
    rpc.notifications$.subscribe({
      next: (n) => log.push(`notification ${n.method}`),
      complete: () => log.push('notifications complete'),
    });
    rpc
      .request('answered', {})
      .subscribe({ next: () => log.push('answered'), error: () => log.push('answered failed') });
    rpc.request('pending', {}).subscribe({
      error: (error: unknown) =>
        log.push(
          `pending failed: ${(error as Error).constructor.name} ${(error as Error).message}`,
        ),
    });
    rpc.closed$.subscribe((reason) => log.push(`closed: ${reason.message}`));
    server.send(JSON.stringify({ method: 'process/output', params: {} }));
    server.send(JSON.stringify({ id: 1, result: {} }));
    server.send(JSON.stringify({ method: 'process/exited', params: {} }));
    server.drop('connection reset');
    expect(log).toEqual([
      'notification process/output',
      'answered',
      'notification process/exited',
      'pending failed: DisconnectedError exec-server transport disconnected: connection reset',
      'notifications complete',
      'closed: exec-server transport disconnected: connection reset',
    ]);
    expect(rpc.isClosed).toBe(true);
  });

  it('calls the onNotification and onClose hooks in order, each with the connection', () => {
    const log: string[] = [];
    let seen: RpcConnection | undefined;
    const { rpc, server } = setup({
      onNotification: (notification, connection) => {
        seen = connection;
        log.push(`hook ${notification.method}`);
      },
      onClose: (reason, connection) => {
        expect(connection).toBe(seen);
        log.push(`hook closed: ${reason.message}`);
      },
    });
    rpc.notifications$.subscribe({
      next: (n) => log.push(`stream ${n.method}`),
      complete: () => log.push('stream complete'),
    });
    rpc.closed$.subscribe((reason) => log.push(`closed$: ${reason.message}`));
    server.send(JSON.stringify({ method: 'process/output', params: {} }));
    server.close();
    expect(seen).toBe(rpc);
    expect(log).toEqual([
      'hook process/output',
      'stream process/output',
      'stream complete',
      'hook closed: exec-server transport disconnected',
      'closed$: exec-server transport disconnected',
    ]);
  });

  it('reports a transport that ended before the constructor returned, to hooks and late subscribers', async () => {
    const { client, server } = createTransportPair();
    server.incoming$.subscribe({ error: () => undefined });
    server.close();
    const closes: RpcConnection[] = [];
    const rpc = new RpcConnection(client, {
      onClose: (_reason, connection) => closes.push(connection),
    });
    expect(closes).toEqual([rpc]);
    expect(rpc.isClosed).toBe(true);
    expect((await firstValueFrom(rpc.closed$)).message).toBe('exec-server transport disconnected');
    expect(await firstValueFrom(rpc.notifications$.pipe(toArray()))).toEqual([]);
  });

  it('reports a clean peer close as a plain disconnect', async () => {
    const { rpc, server } = setup();
    const pending = record(rpc.request('x', {})).outcome;
    server.close();
    expect(pending.error).toBeInstanceOf(DisconnectedError);
    expect((pending.error as Error).message).toBe('exec-server transport disconnected');
    expect((await firstValueFrom(rpc.closed$)).message).toBe('exec-server transport disconnected');
  });

  it('close() fails pending calls, closes the transport, is idempotent and replays the reason', async () => {
    const { rpc, client } = setup();
    const pending = record(rpc.request('x', {})).outcome;
    rpc.close();
    rpc.close();
    expect(client.isClosed).toBe(true);
    expect(pending.error).toEqual(new DisconnectedError('exec-server transport disconnected'));
    const reasons = await firstValueFrom(rpc.closed$.pipe(toArray()));
    expect(reasons.map((r) => r.message)).toEqual(['exec-server transport disconnected']);
  });

  it('close(reason) fails pending calls with the reason given, and only the first close counts', async () => {
    const { rpc } = setup();
    const pending = record(rpc.request('x', {})).outcome;
    const reason = new DisconnectedError('exec-server client was closed');
    rpc.close(reason);
    rpc.close(new DisconnectedError('second'));
    expect(pending.error).toBe(reason);
    expect(await firstValueFrom(rpc.closed$)).toBe(reason);
  });

  it('errors new requests immediately and ignores notify once closed', () => {
    const { rpc, client } = setup();
    rpc.close();
    const late = record(rpc.request('x', {})).outcome;
    expect(late.error).toBeInstanceOf(DisconnectedError);
    rpc.notify('y', {});
    expect(client.sent).toEqual([]);
  });

  it('handles a transport that has already ended when the connection is made', async () => {
    const { client, server } = createTransportPair();
    server.close();
    const rpc = new RpcConnection(client);
    expect(rpc.isClosed).toBe(true);
    expect(await firstValueFrom(rpc.closed$)).toBeInstanceOf(DisconnectedError);
  });
});

describe('RpcConnection malformed input is fatal', () => {
  it.each([
    [
      'bad JSON',
      '{"id":1,',
      /^exec-server protocol error: exec-server sent malformed JSON \([^:(]*JSON[^)]*\): \{"id":1,$/,
    ],
    ['a non-object', '42', /not a JSON-RPC request/],
    ['a batch', '[{"id":1,"result":{}}]', /not a JSON-RPC request/],
    ['an unclassifiable object', '{"id":1}', /not a JSON-RPC request/],
  ])('closes with a ProtocolError on %s', async (_name, text, pattern) => {
    const { rpc, client, server } = setup();
    const pending = record(rpc.request('x', {})).outcome;
    server.send(text);
    const reason = await firstValueFrom(rpc.closed$);
    expect(reason).toBeInstanceOf(ProtocolError);
    expect(reason.message).toMatch(pattern);
    expect(pending.error).toBeInstanceOf(DisconnectedError);
    expect(client.isClosed).toBe(true);
    // Later messages are not processed.
    server.send(JSON.stringify({ id: 1, result: {} }));
    expect(pending.values).toEqual([]);
  });
});

describe('RpcConnection server→client requests', () => {
  it('answers an unknown method with -32601', () => {
    const { rpc, client, server } = setup();
    current = rpc;
    server.send(JSON.stringify({ id: 0, method: 'sampling/createMessage', params: {} }));
    expect(JSON.parse(client.sent[0]!)).toEqual({
      id: 0,
      error: {
        code: -32601,
        message: 'exec-server client does not implement `sampling/createMessage` yet',
      },
    });
  });

  it('answers with the handler result, error, or null on empty completion', () => {
    const { rpc, client, server } = setup({
      handleRequest: (method, params) => {
        if (method === 'network/policyRequest') return of({ decision: 'deny', echo: params });
        if (method === 'fails')
          return throwError(() => new ServerError(-32602, 'invalid network policy request params'));
        if (method === 'empty') return of();
        return undefined;
      },
    });
    current = rpc;
    server.send(JSON.stringify({ id: 1, method: 'network/policyRequest', params: { host: 'a' } }));
    server.send(JSON.stringify({ id: 2, method: 'fails', params: {} }));
    server.send(JSON.stringify({ id: 3, method: 'empty', params: {} }));
    expect(client.sent.map((t) => JSON.parse(t) as unknown)).toEqual([
      { id: 1, result: { decision: 'deny', echo: { host: 'a' } } },
      { id: 2, error: { code: -32602, message: 'invalid network policy request params' } },
      { id: 3, result: null },
    ]);
  });

  it('closes on a reused in-flight id and sends no answer after the drop', async () => {
    const decisions = new Subject<unknown>();
    const { rpc, client, server } = setup({ handleRequest: () => decisions });
    server.send(JSON.stringify({ id: 7, method: 'network/policyRequest', params: {} }));
    expect(rpc.isClosed).toBe(false);
    server.send(JSON.stringify({ id: 7, method: 'network/policyRequest', params: {} }));
    const reason = await firstValueFrom(rpc.closed$);
    expect(reason).toBeInstanceOf(ProtocolError);
    expect((reason as ProtocolError).detail).toBe('exec-server reused an in-flight request ID');
    expect(decisions.observed).toBe(false);
    decisions.next('too late');
    expect(client.sent).toEqual([]);
  });

  it('allows an id again once its answer was sent', () => {
    const { rpc, client, server } = setup({ handleRequest: () => of('ok') });
    current = rpc;
    server.send(JSON.stringify({ id: 1, method: 'network/policyRequest', params: {} }));
    server.send(JSON.stringify({ id: 1, method: 'network/policyRequest', params: {} }));
    expect(rpc.isClosed).toBe(false);
    expect(client.sent).toHaveLength(2);
  });

  it.each([
    ['-1', -1],
    ['a string', '"abc"'],
  ])('closes on an invalid request id (%s)', async (_name, id) => {
    const { rpc, client, server } = setup({ handleRequest: () => NEVER });
    server.send(`{"id":${String(id)},"method":"network/policyRequest","params":{}}`);
    const reason = await firstValueFrom(rpc.closed$);
    expect(reason).toBeInstanceOf(ExecServerError);
    expect((reason as ProtocolError).detail).toBe('exec-server sent an invalid request ID');
    expect(client.sent).toEqual([]);
  });
});
