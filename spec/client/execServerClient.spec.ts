import { afterEach, describe, expect, it } from '@jest/globals';
import { TestScheduler } from 'rxjs/testing';
import { firstValueFrom, lastValueFrom, of, toArray, type Observable } from 'rxjs';
import {
  ExecServerClient,
  isRetryableResumeError,
  type ExecServerClientOptions,
  type ProcessHandle,
} from '../../src/client/index.js';
import {
  DisconnectedError,
  JsonError,
  NotFoundError,
  ProcessWriteRejectedError,
  ProtocolError,
  ServerError,
  TimeoutError,
} from '../../src/protocol/errors.js';
import { base64, fakeConnection, text, type FakeExecutor } from './support/fakeExecutor.js';
import { connectFake, watch } from './support/fakeClient.js';

const ENV_INFO = { shell: { name: 'bash', path: '/bin/bash' }, executorVersion: '0.169.0' };

/** Clients a test opened; closed after each test so no call's deadline outlives it. */
const opened: ExecServerClient[] = [];
afterEach(() => {
  for (const client of opened.splice(0)) client.close();
});

function connect(options: Partial<ExecServerClientOptions> = {}, environmentInfo?: unknown) {
  return connectFake(opened, options, environmentInfo);
}

function startProcess(
  client: ExecServerClient,
  executor: FakeExecutor,
  processId = 'p1',
): ProcessHandle {
  const started = watch(
    client.startProcess({ processId, argv: ['cat'], cwd: '/tmp', pipeStdin: true }),
  );
  executor.respond(executor.take('process/start'), { processId, sandboxType: 'none' });
  const handle = started.values[0];
  if (handle === undefined) throw new Error(`start failed: ${String(started.error)}`);
  return handle;
}

const output = (processId: string, seq: number, data: string, stream = 'stdout') => ({
  processId,
  seq,
  stream,
  chunk: base64(data),
});

describe('ExecServerClient.connect', () => {
  it('sends initialize with an explicit null resumeSessionId, then initialized {}', () => {
    const { client, executor } = connect({}, ENV_INFO);
    expect(client.sessionId).toBe('session-1');
    expect(client.state).toBe('connected');
    expect(executor.requests[0]).toMatchObject({
      id: 1,
      method: 'initialize',
      params: { clientName: 'spec', resumeSessionId: null },
    });
    expect(executor.notifications).toEqual([{ method: 'initialized', params: {} }]);
  });

  it('serves environmentInfo from the initialize result without asking again', async () => {
    const { client, executor } = connect({}, ENV_INFO);
    const info = await firstValueFrom(client.environmentInfo());
    expect(info.executorVersion).toBe('0.169.0');
    expect(info.capabilities.fileWriteStreaming).toBe(false);
    expect(executor.pending('environment/info')).toHaveLength(0);
  });

  it('supports(method) reads the capability flag the method table names', async () => {
    const { client } = connect(
      {},
      { ...ENV_INFO, capabilities: { fsWatchMissing: true, fileWriteStreaming: false } },
    );
    expect(await firstValueFrom(client.supports('fs/watchMissing'))).toBe(true);
    expect(await firstValueFrom(client.supports('fs/writeBlock'))).toBe(false);
    expect(await firstValueFrom(client.supports('capabilities/discoverV2'))).toBe(false);
    expect(await firstValueFrom(client.supports('fs/readFile'))).toBe(true);
  });

  it('connects with a malformed initialize environmentInfo, and reports it when asked for', () => {
    const { client, executor } = connect({}, { shell: 'bash' });
    expect(client.state).toBe('connected');
    for (let attempt = 0; attempt < 2; attempt++) {
      const info = watch(client.environmentInfo());
      expect(info.values).toEqual([]);
      expect(info.error).toBeInstanceOf(JsonError);
      expect(String((info.error as Error).message)).toMatch(
        /`initialize` result did not match the protocol: environmentInfo: /,
      );
    }
    expect(executor.pending('environment/info')).toHaveLength(0);
  });

  it('rejects an initialize result without a sessionId', () => {
    const { transport, executor } = fakeConnection('session-1');
    executor.handlers.set('initialize', () => ({ environmentInfo: ENV_INFO }));
    const seen = watch(ExecServerClient.connect(transport, { clientName: 'spec' }));
    expect(seen.error).toBeInstanceOf(JsonError);
    expect(String((seen.error as Error).message)).toMatch(/sessionId/);
  });

  it('fetches environment/info with params null once, then caches it', () => {
    const { client, executor } = connect();
    const first = watch(client.environmentInfo());
    const request = executor.take('environment/info');
    expect(request.params).toBeNull();
    executor.respond(request, ENV_INFO);
    const second = watch(client.environmentInfo());
    expect(second.values[0]).toBe(first.values[0]);
    expect(executor.requests.filter((r) => r.method === 'environment/info')).toHaveLength(1);
  });

  it('environmentStatus is a live probe every time', () => {
    const { client, executor } = connect();
    const one = watch(client.environmentStatus());
    executor.respond(executor.take('environment/status'), { status: 'ready' });
    watch(client.environmentStatus());
    expect(one.values).toEqual(['ready']);
    expect(executor.requests.filter((r) => r.method === 'environment/status')).toHaveLength(2);
  });

  it('times out the handshake after 10s (marbles)', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ expectObservable }) => {
      const { transport, executor } = fakeConnection();
      executor.handlers.delete('initialize');
      const connect$ = ExecServerClient.connect(transport, { clientName: 'spec', scheduler });
      expectObservable(connect$).toBe(
        '10s #',
        undefined,
        new TimeoutError('timed out waiting for exec-server initialize handshake after 10s'),
      );
    });
  });

  it('honours a custom initialize budget and closes the transport on timeout', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ expectObservable, flush }) => {
      const { transport, executor } = fakeConnection();
      executor.handlers.delete('initialize');
      const connect$ = ExecServerClient.connect(transport, {
        clientName: 'spec',
        scheduler,
        initializeTimeoutMs: 250,
      });
      expectObservable(connect$).toBe(
        '250ms #',
        undefined,
        new TimeoutError('timed out waiting for exec-server initialize handshake after 250ms'),
      );
      flush();
      expect(transport.isClosed).toBe(true);
    });
  });

  it('bounds environment/status by 10s and environment/info by 30s (marbles)', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ expectObservable }) => {
      const { client } = connect({ scheduler });
      expectObservable(client.environmentStatus()).toBe(
        '10s #',
        undefined,
        new TimeoutError(
          'exec-server protocol error: timed out waiting for exec-server `environment/status` response after 10s',
        ),
      );
      expectObservable(client.environmentInfo()).toBe(
        '30s #',
        undefined,
        new TimeoutError(
          'exec-server protocol error: timed out waiting for exec-server `environment/info` response after 30s',
        ),
      );
    });
  });

  it('replaces a transport whose environment/info timed out when recovery is on', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ flush }) => {
      const { client, transport } = connect({ scheduler, recovery: true });
      const info = watch(client.environmentInfo());
      flush();
      expect(info.error).toBeInstanceOf(TimeoutError);
      expect(transport.isClosed).toBe(true);
      expect(client.state).toBe('recovering');
    });
  });

  it('rejects a resumed connect that returns another session id', () => {
    const { transport } = fakeConnection('other');
    const seen = watch(
      ExecServerClient.connect(transport, { clientName: 'spec', resumeSessionId: 'session-1' }),
    );
    expect(seen.error).toBeInstanceOf(ProtocolError);
    expect((seen.error as Error).message).toBe(
      'exec-server protocol error: exec-server initialized an unexpected session other',
    );
    expect(transport.isClosed).toBe(true);
  });

  it('reports a malformed initialize result as JsonError', () => {
    const { transport, executor } = fakeConnection();
    executor.handlers.set('initialize', () => ({ session: 'x' }));
    const seen = watch(ExecServerClient.connect(transport, { clientName: 'spec' }));
    expect(seen.error).toBeInstanceOf(JsonError);
  });
});

describe('processes', () => {
  it('sends process/start with a file: URI cwd and the serde null/omitted fields', () => {
    const { client, executor } = connect();
    watch(
      client.startProcess({
        processId: 'p1',
        argv: ['echo', 'hi'],
        cwd: '/tmp/a b',
        env: { PATH: '/bin' },
      }),
    );
    expect(executor.take('process/start').params).toEqual({
      processId: 'p1',
      argv: ['echo', 'hi'],
      cwd: 'file:///tmp/a%20b',
      envPolicy: null,
      env: { PATH: '/bin' },
      tty: false,
      pipeStdin: false,
      arg0: null,
      sandbox: null,
      enforceManagedNetwork: false,
      managedNetwork: null,
    });
  });

  it('keeps events that arrive before the start response and delivers them in seq order', async () => {
    const { client, executor } = connect();
    const started = watch(client.startProcess({ processId: 'p1', argv: ['x'], cwd: '/' }));
    executor.notify('process/output', output('p1', 2, 'err', 'stderr'));
    executor.notify('process/output', output('p1', 1, 'out'));
    executor.respond(executor.take('process/start'), { processId: 'p1', sandboxType: 'none' });
    const handle = started.values[0]!;
    expect(handle.sandboxType).toBe('none');
    const events = watch(handle.events$);
    const stdout = watch(handle.stdout$);
    const stderr = watch(handle.stderr$);
    const exit = watch(handle.exit$);
    executor.notify('process/closed', { processId: 'p1', seq: 4 });
    executor.notify('process/exited', {
      processId: 'p1',
      seq: 3,
      exitCode: 7,
      sandboxDenied: false,
    });
    expect(events.values.map((e) => `${e.type}:${e.seq}`)).toEqual([
      'output:1',
      'output:2',
      'exited:3',
      'closed:4',
    ]);
    expect(events.completed).toBe(true);
    expect(stdout.values.map(text)).toEqual(['out']);
    expect(stderr.values.map(text)).toEqual(['err']);
    expect(exit.values).toEqual([7]);
    // A late subscriber gets the retained history.
    const late = await lastValueFrom(handle.events$.pipe(toArray()));
    expect(late.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it('ignores notifications for unknown processes and legacy exits without sandboxDenied', () => {
    const { client, executor } = connect();
    const handle = startProcess(client, executor);
    executor.notify('process/output', output('nobody', 1, 'x'));
    executor.notify('process/exited', { processId: 'p1', seq: 1, exitCode: 0 });
    expect(watch(handle.exit$).values).toEqual([0]);
    expect(client.state).toBe('connected');
  });

  it('refuses a second process with a registered id', () => {
    const { client, executor } = connect();
    startProcess(client, executor, 'p1');
    const again = watch(client.startProcess({ processId: 'p1', argv: ['x'], cwd: '/' }));
    expect((again.error as Error).message).toBe(
      'exec-server protocol error: session already registered for process p1',
    );
  });

  it('forwards start errors and frees the id', () => {
    const { client, executor } = connect();
    const first = watch(client.startProcess({ processId: 'p1', argv: ['nope'], cwd: '/' }));
    executor.fail(executor.take('process/start'), -32603, 'No such file or directory (os error 2)');
    expect(first.error).toBeInstanceOf(ServerError);
    expect((first.error as ServerError).code).toBe(-32603);
    const second = watch(client.startProcess({ processId: 'p1', argv: ['x'], cwd: '/' }));
    expect(second.error).toBeUndefined();
  });

  it('terminates a process whose caller left before the start response', () => {
    const { client, executor } = connect();
    const subscription = client
      .startProcess({ processId: 'p1', argv: ['x'], cwd: '/' })
      .subscribe();
    subscription.unsubscribe();
    executor.respond(executor.take('process/start'), { processId: 'p1', sandboxType: 'none' });
    const terminate = executor.take('process/terminate');
    expect(terminate.params).toEqual({ processId: 'p1' });
    executor.respond(terminate, { running: true });
    expect(
      watch(client.startProcess({ processId: 'p1', argv: ['x'], cwd: '/' })).error,
    ).toBeUndefined();
  });

  it('gives every write a fresh writeId and reports rejected writes', () => {
    const { client, executor } = connect();
    const handle = startProcess(client, executor);
    const one = watch(handle.write('a'));
    const two = watch(handle.write(new Uint8Array([1, 2])));
    const [w1, w2] = executor.pending('process/write');
    expect(w1!.params).toEqual({ processId: 'p1', chunk: base64('a'), writeId: '1' });
    expect(w2!.params).toEqual({ processId: 'p1', chunk: 'AQI=', writeId: '2' });
    executor.respond(w1!, { status: 'accepted' });
    executor.respond(w2!, { status: 'stdinClosed' });
    expect(one.completed).toBe(true);
    expect(two.error).toBeInstanceOf(ProcessWriteRejectedError);
    expect((two.error as Error).message).toContain('stdin is closed');
  });

  it('signal, terminate and read map to their methods', () => {
    const { client, executor } = connect();
    const handle = startProcess(client, executor);
    const signal = watch(handle.signal());
    expect(executor.take('process/signal').params).toEqual({
      processId: 'p1',
      signal: 'interrupt',
    });
    executor.respond(executor.take('process/signal'), {});
    const terminate = watch(handle.terminate());
    executor.respond(executor.take('process/terminate'), { running: true });
    const read = watch(handle.read({ afterSeq: 1 }));
    const readRequest = executor.take('process/read');
    expect(readRequest.params).toEqual({
      processId: 'p1',
      afterSeq: 1,
      maxBytes: null,
      waitMs: null,
    });
    executor.respond(readRequest, {
      chunks: [{ seq: 2, stream: 'stdout', chunk: base64('hi') }],
      nextSeq: 3,
      exited: false,
      exitCode: null,
      closed: false,
      failure: null,
      sandboxDenied: false,
    });
    expect(signal.completed).toBe(true);
    expect(terminate.values).toEqual([true]);
    expect(text(read.values[0]!.chunks[0]!.chunk)).toBe('hi');
  });

  it('fails a process whose reorder buffer overflows and synthesizes its reads', () => {
    const { client, executor } = connect();
    const handle = startProcess(client, executor);
    const events = watch(handle.events$);
    for (let seq = 2; seq <= 258; seq++) executor.notify('process/output', output('p1', seq, 'x'));
    expect((events.error as Error).message).toBe(
      'process event reorder buffer exceeds 256 entries',
    );
    const read = watch(handle.read());
    expect(read.values[0]).toMatchObject({
      chunks: [],
      exited: true,
      closed: true,
      exitCode: null,
      failure: 'process event reorder buffer exceeds 256 entries',
    });
    expect(executor.pending('process/read')).toHaveLength(0);
    expect(client.state).toBe('connected');
  });

  it('treats an undecodable process notification as a connection fault', () => {
    const { client, executor, transport } = connect();
    const disconnects = watch(client.disconnected$);
    executor.notify('process/output', { processId: 'p1', seq: 'one' });
    expect(transport.isClosed).toBe(true);
    expect(client.state).toBe('failed');
    expect(disconnects.values[0]!.message).toMatch(/^exec-server notification handling failed: /);
  });
});

describe('network policy requests', () => {
  it('denies with not_allowed without a handler, and answers unknown methods with -32601', () => {
    const { client, executor } = connect();
    startProcess(client, executor);
    executor.request(1, 'network/policyRequest', {
      processId: 'p1',
      request: { protocol: 'https_connect', host: 'example.com', port: 443 },
    });
    executor.request(2, 'something/else', {});
    expect(executor.replies).toEqual([
      { id: 1, result: { decision: { type: 'deny', reason: 'not_allowed' } } },
      {
        id: 2,
        error: {
          code: -32601,
          message: 'exec-server client does not implement `something/else` yet',
        },
      },
    ]);
  });

  it('asks the handler for registered processes and answers bad params with -32602', () => {
    const { client, executor } = connect({
      handleNetworkPolicyRequest: (request) =>
        of(
          request.request.host === 'ok.test'
            ? { type: 'allow' as const }
            : { type: 'deny' as const, reason: 'x\u0001' },
        ),
    });
    startProcess(client, executor);
    const ask = (id: number, host: string) =>
      executor.request(id, 'network/policyRequest', {
        processId: 'p1',
        request: { protocol: 'http', host, port: 80 },
      });
    ask(1, 'ok.test');
    ask(2, 'bad.test');
    executor.request(3, 'network/policyRequest', { nope: true });
    expect(executor.replies).toEqual([
      { id: 1, result: { decision: { type: 'allow' } } },
      { id: 2, result: { decision: { type: 'deny', reason: 'not_allowed' } } },
      { id: 3, error: { code: -32602, message: 'invalid network policy request params' } },
    ]);
  });
});

describe('filesystem', () => {
  it('sends file: URIs and decodes readFile bytes', () => {
    const { client, executor } = connect();
    const read = watch(client.fs.readFile('/tmp/a b.txt'));
    const request = executor.take('fs/readFile');
    expect(request.params).toEqual({ path: 'file:///tmp/a%20b.txt', sandbox: null });
    executor.respond(request, { dataBase64: base64('hello') });
    expect(text(read.values[0]!)).toBe('hello');
  });

  it('maps -32004 to NotFoundError naming the native path', () => {
    const { client, executor } = connect();
    const read = watch(client.fs.getMetadata('/missing/x'));
    executor.fail(
      executor.take('fs/getMetadata'),
      -32004,
      'No such file or directory (os error 2)',
    );
    expect(read.error).toBeInstanceOf(NotFoundError);
    expect(read.error).toBeInstanceOf(ServerError);
    expect((read.error as NotFoundError).path).toBe('/missing/x');
    expect((read.error as Error).message).toBe(
      'exec-server rejected request (-32004): No such file or directory (os error 2): /missing/x',
    );
  });

  it('rejects relative paths before sending anything', () => {
    const { client, executor } = connect();
    const read = watch(client.fs.readFile('relative.txt'));
    expect((read.error as Error).message).toContain('not absolute');
    expect(executor.pending('fs/readFile')).toHaveLength(0);
  });

  it('converts canonicalize, walk and copy paths', () => {
    const { client, executor } = connect();
    const canonical = watch(client.fs.canonicalize('/a'));
    executor.respond(executor.take('fs/canonicalize'), { path: 'file:///real/a%20b' });
    expect(canonical.values).toEqual(['/real/a b']);
    watch(client.fs.copy('/src', '/dst', { recursive: true }));
    expect(executor.take('fs/copy').params).toEqual({
      sourcePath: 'file:///src',
      destinationPath: 'file:///dst',
      recursive: true,
      sandbox: null,
    });
    watch(client.fs.remove('/gone'));
    expect(executor.take('fs/remove').params).toEqual({
      path: 'file:///gone',
      recursive: null,
      force: null,
      sandbox: null,
    });
  });

  it('streams a file through fs/open, fs/readBlock and fs/close', () => {
    const { client, executor } = connect();
    const chunks = watch(client.fs.readFileStream('/big'));
    const open = executor.take('fs/open');
    const handleId = (open.params as { handleId: string }).handleId;
    expect(handleId).toMatch(/^[0-9a-f]{32}$/);
    executor.respond(open, { handleId });
    const block1 = executor.take('fs/readBlock');
    expect(block1.params).toEqual({ handleId, offset: 0, len: 1048576 });
    executor.respond(block1, { chunk: base64('abc'), eof: false });
    const block2 = executor.take('fs/readBlock');
    expect(block2.params).toEqual({ handleId, offset: 3, len: 1048576 });
    executor.respond(block2, { chunk: base64('de'), eof: true });
    expect(chunks.values.map(text)).toEqual(['abc', 'de']);
    expect(chunks.completed).toBe(true);
    expect(executor.take('fs/close').params).toEqual({ handleId });
  });
});

describe('writable file streams', () => {
  it('refuses without the fileWriteStreaming capability and sends nothing', () => {
    const { client, executor } = connect({}, ENV_INFO);
    const written = watch(client.fs.writeFileStream('/f', of(new Uint8Array([1]))));
    expect((written.error as Error).message).toBe(
      'exec-server protocol error: exec-server does not support writable file streams',
    );
    expect(executor.requests.map((r) => r.method)).toEqual(['initialize']);
  });

  it('opens with mode replace, writes blocks at increasing offsets, then closes', () => {
    const { client, executor } = connect(
      {},
      { ...ENV_INFO, capabilities: { fileWriteStreaming: true } },
    );
    executor.handlers.set('fs/writeBlock', () => ({}));
    executor.handlers.set('fs/close', () => ({}));
    const written = watch(
      client.fs.writeFileStream(
        '/f',
        of(new Uint8Array(Buffer.from('ab')), new Uint8Array(Buffer.from('cde'))),
      ),
    );
    const open = executor.take('fs/open');
    const handleId = (open.params as { handleId: string }).handleId;
    expect(open.params).toEqual({ handleId, path: 'file:///f', mode: 'replace', sandbox: null });
    executor.respond(open, { handleId });
    expect(executor.requests.slice(2).map((r) => [r.method, r.params])).toEqual([
      ['fs/writeBlock', { handleId, offset: 0, chunk: base64('ab') }],
      ['fs/writeBlock', { handleId, offset: 2, chunk: base64('cde') }],
      ['fs/close', { handleId }],
    ]);
    expect(written.values).toEqual([undefined]);
    expect(written.completed).toBe(true);
  });
});

describe('http', () => {
  it('streams the body by seq with a client-generated request id', () => {
    const { client, executor } = connect();
    const response = watch(
      client.http.request({ method: 'GET', url: 'http://h.test/', body: 'x' }),
    );
    const request = executor.take('http/request');
    expect(request.params).toEqual({
      method: 'GET',
      url: 'http://h.test/',
      headers: [],
      bodyBase64: base64('x'),
      redirectPolicy: 'follow',
      requestId: 'http-1',
      streamResponse: true,
    });
    executor.respond(request, {
      status: 404,
      headers: [{ name: 'a', value: 'b' }],
      bodyBase64: '',
    });
    executor.notify('http/request/bodyDelta', {
      requestId: 'http-1',
      seq: 1,
      deltaBase64: base64('he'),
      done: false,
      error: null,
    });
    const { status, headers, body$ } = response.values[0]!;
    expect(status).toBe(404);
    expect(headers).toEqual([{ name: 'a', value: 'b' }]);
    const body = watch(body$);
    executor.notify('http/request/bodyDelta', {
      requestId: 'http-1',
      seq: 2,
      deltaBase64: base64('llo'),
      done: true,
      error: null,
    });
    expect(body.values.map(text)).toEqual(['he', 'llo']);
    expect(body.completed).toBe(true);
    expect(watch(body$).error).toBeInstanceOf(ProtocolError);
  });

  it('fails the body on a seq gap and on a reported error', () => {
    const { client, executor } = connect();
    const a = watch(client.http.request({ method: 'GET', url: 'http://h.test/a' }));
    executor.respond(executor.take('http/request'), { status: 200, headers: [], bodyBase64: '' });
    const b = watch(client.http.request({ method: 'GET', url: 'http://h.test/b' }));
    executor.respond(executor.take('http/request'), { status: 200, headers: [], bodyBase64: '' });
    const bodyA = watch(a.values[0]!.body$);
    const bodyB = watch(b.values[0]!.body$);
    executor.notify('http/request/bodyDelta', {
      requestId: 'http-1',
      seq: 2,
      deltaBase64: '',
      done: false,
      error: null,
    });
    executor.notify('http/request/bodyDelta', {
      requestId: 'http-2',
      seq: 1,
      deltaBase64: '',
      done: true,
      error: 'reset',
    });
    expect((bodyA.error as Error).message).toBe(
      'exec-server protocol error: http response stream `http-1` received seq 2, expected 1',
    );
    expect((bodyB.error as Error).message).toBe(
      'exec-server protocol error: http response stream `http-2` failed: reset',
    );
  });

  it('fails a stream that queues more than 256 frames before it is read', () => {
    const { client, executor } = connect();
    const response = watch(client.http.request({ method: 'GET', url: 'http://h.test/' }));
    executor.respond(executor.take('http/request'), { status: 200, headers: [], bodyBase64: '' });
    for (let seq = 1; seq <= 257; seq++) {
      executor.notify('http/request/bodyDelta', {
        requestId: 'http-1',
        seq,
        deltaBase64: base64('x'),
        done: false,
        error: null,
      });
    }
    const body = watch(response.values[0]!.body$);
    expect(body.values).toHaveLength(256);
    expect((body.error as Error).message).toBe(
      'exec-server protocol error: http response stream `http-1` failed: body delta channel filled before delivery',
    );
  });

  it('treats an oversize delta as a connection fault', () => {
    const { client, executor, transport } = connect();
    watch(client.http.request({ method: 'GET', url: 'http://h.test/' }));
    executor.respond(executor.take('http/request'), { status: 200, headers: [], bodyBase64: '' });
    executor.notify('http/request/bodyDelta', {
      requestId: 'http-1',
      seq: 1,
      deltaBase64: 'A'.repeat(1_398_104 + 4),
      done: false,
      error: null,
    });
    expect(transport.isClosed).toBe(true);
    expect(client.state).toBe('failed');
  });
});

describe('transport loss without recovery', () => {
  it('fails pending calls, processes and the session with "exec-server transport disconnected"', () => {
    const { client, executor } = connect();
    const handle = startProcess(client, executor);
    const events = watch(handle.events$);
    const pending = watch(client.fs.readFile('/x'));
    executor.end.close();
    expect(client.state).toBe('failed');
    expect(pending.error).toBeInstanceOf(DisconnectedError);
    expect((pending.error as Error).message).toBe('exec-server transport disconnected');
    expect((events.error as Error).message).toBe('exec-server transport disconnected');
    const later = watch(client.startProcess({ argv: ['x'], cwd: '/' }));
    expect(later.error).toBeInstanceOf(DisconnectedError);
  });
});

describe('recovery', () => {
  it('moves to recovering, fails other in-flight calls, and re-issues pending process/write with the same writeId after catching up', () => {
    const { client, executor } = connect({ recovery: true });
    const handle = startProcess(client, executor);
    const events = watch(handle.events$);
    executor.notify('process/output', output('p1', 1, 'a'));
    const write = watch(handle.write('input'));
    const read = watch(handle.read({ afterSeq: 1 }));
    const fsCall = watch(client.fs.readFile('/x'));
    const disconnects = watch(client.disconnected$);
    executor.end.close();

    expect(client.state).toBe('recovering');
    expect(disconnects.values).toHaveLength(1);
    expect((fsCall.error as Error).message).toBe('exec-server transport disconnected');
    expect(write.error).toBeUndefined();
    expect(read.error).toBeUndefined();
    // New calls wait for the outcome.
    const waiting = watch(client.fs.getMetadata('/y'));
    expect(waiting.values).toHaveLength(0);
    // Status never waits: it fails fast while recovering.
    expect((watch(client.environmentStatus()).error as Error).message).toBe(
      'exec-server environment is recovering',
    );

    const next = fakeConnection('session-1');
    const resumed = watch(client.resume(next.transport));
    expect(next.executor.requests[0]).toMatchObject({
      method: 'initialize',
      params: { clientName: 'spec', resumeSessionId: 'session-1' },
    });
    expect(next.executor.notifications).toEqual([{ method: 'initialized', params: {} }]);
    const catchUp = next.executor.take('process/read');
    // The catch-up is paged (maxBytes), so a link cut mid-way keeps what already passed.
    expect(catchUp.params).toEqual({
      processId: 'p1',
      afterSeq: 1,
      maxBytes: 128 * 1024,
      waitMs: 0,
    });
    // Nothing else is sent before the catch-up is answered.
    expect(next.executor.requests.map((r) => r.method)).toEqual(['initialize', 'process/read']);
    const page = (chunks: unknown[]) => ({
      chunks,
      nextSeq: 3,
      exited: false,
      exitCode: null,
      closed: false,
      failure: null,
      sandboxDenied: false,
    });
    next.executor.respond(catchUp, page([{ seq: 2, stream: 'stdout', chunk: base64('b') }]));
    expect(resumed.completed).toBe(false);
    // Until a page comes back empty.
    const nextPage = next.executor.take('process/read');
    expect(nextPage.params).toMatchObject({ afterSeq: 2, maxBytes: 128 * 1024 });
    next.executor.respond(nextPage, page([]));
    expect(resumed.completed).toBe(true);
    expect(client.state).toBe('connected');
    expect(next.executor.requests.map((r) => r.method)).toEqual([
      'initialize',
      'process/read',
      'process/read',
      'process/write',
      'process/read',
      'fs/getMetadata',
    ]);
    expect(next.executor.take('process/write').params).toEqual({
      processId: 'p1',
      chunk: base64('input'),
      writeId: '1',
    });
    expect(events.values.map((e) => e.seq)).toEqual([1, 2]);
    // Live notifications on the new transport continue the same stream without duplicates.
    next.executor.notify('process/output', output('p1', 2, 'b'));
    next.executor.notify('process/output', output('p1', 3, 'c'));
    expect(events.values.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it("publishes the transport's own reason on disconnected$, even with a pending write", () => {
    const { client, executor } = connect({ recovery: true });
    const handle = startProcess(client, executor);
    watch(handle.write('x'));
    const disconnects = watch(client.disconnected$);
    executor.end.drop('socket reset');
    expect(disconnects.values.map((e) => e.message)).toEqual([
      'exec-server transport disconnected: socket reset',
    ]);
    expect(client.state).toBe('recovering');
  });

  it('publishes connected → recovering → connected → retired on state$', () => {
    const { client, executor } = connect({ recovery: true });
    const states = watch(client.state$);
    executor.end.close();
    watch(client.resume(fakeConnection().transport));
    client.retire();
    expect(states.values).toEqual(['connected', 'recovering', 'connected', 'retired']);
    expect(watch(client.state$).values).toEqual(['retired']);
  });

  it('rejects a resume that returns another session id and stays recovering', () => {
    const { client, executor } = connect({ recovery: true });
    executor.end.close();
    const wrong = fakeConnection('session-2');
    const attempt = watch(client.resume(wrong.transport));
    expect((attempt.error as Error).message).toBe(
      'exec-server protocol error: exec-server initialized an unexpected session session-2',
    );
    expect(isRetryableResumeError(attempt.error)).toBe(false);
    expect(wrong.transport.isClosed).toBe(true);
    expect(client.state).toBe('recovering');
  });

  it('surfaces -32010 as retryable and "unknown session id" as fatal', () => {
    const { client, executor } = connect({ recovery: true });
    executor.end.close();
    const busy = fakeConnection();
    busy.executor.handlers.set('initialize', (_params, request) => {
      busy.executor.fail(
        request,
        -32010,
        'session session-1 is already attached to another connection',
      );
      return undefined;
    });
    const first = watch(client.resume(busy.transport));
    expect(isRetryableResumeError(first.error)).toBe(true);
    const gone = fakeConnection();
    gone.executor.handlers.set('initialize', (_params, request) => {
      gone.executor.fail(request, -32600, 'unknown session id session-1');
      return undefined;
    });
    const second = watch(client.resume(gone.transport));
    expect(isRetryableResumeError(second.error)).toBe(false);
    expect(client.state).toBe('recovering');
  });

  it('fails a process whose output was evicted while disconnected and terminates it', () => {
    const { client, executor } = connect({ recovery: true });
    const handle = startProcess(client, executor);
    const events = watch(handle.events$);
    executor.end.close();
    const next = fakeConnection();
    watch(client.resume(next.transport));
    next.executor.respond(next.executor.take('process/read'), {
      chunks: [{ seq: 5, stream: 'stdout', chunk: base64('late') }],
      nextSeq: 6,
      exited: false,
      exitCode: null,
      closed: false,
      failure: null,
      sandboxDenied: false,
    });
    next.executor.respond(next.executor.take('process/terminate'), { running: true });
    expect(client.state).toBe('connected');
    expect((events.error as Error).message).toBe(
      'failed to recover process p1: process events are no longer retained while recovering through sequence 5: the executor discarded output produced while this client was away (codex exec-server keeps only the newest 1 MiB of each process), so the stream cannot continue without a gap',
    );
  });

  it('fail() ends recovery: waiting calls and handles get the failure', () => {
    const { client, executor } = connect({ recovery: true });
    const handle = startProcess(client, executor);
    executor.end.close();
    const waiting = watch(client.fs.readFile('/x'));
    const write = watch(handle.write('x'));
    client.fail(
      'exec-server transport disconnected; failed to resume exec-server session: recovery timed out after 25s',
    );
    expect(client.state).toBe('failed');
    for (const seen of [waiting, write]) {
      expect(seen.error).toBeInstanceOf(DisconnectedError);
      expect((seen.error as Error).message).toContain('recovery timed out after 25s');
    }
  });

  it('fails HTTP body streams at the start of recovery', () => {
    const { client, executor } = connect({ recovery: true });
    const response = watch(client.http.request({ method: 'GET', url: 'http://h.test/' }));
    executor.respond(executor.take('http/request'), { status: 200, headers: [], bodyBase64: '' });
    const body = watch(response.values[0]!.body$);
    executor.end.close();
    expect(body.error).toBeInstanceOf(DisconnectedError);
  });
});

describe('retirement', () => {
  it('rejects pending calls and process starts before failing process handles and streams', () => {
    const { client, executor, transport } = connect();
    const order: string[] = [];
    const handle = startProcess(client, executor);
    handle.events$.subscribe({ error: () => order.push('process events') });
    const response = watch(client.http.request({ method: 'GET', url: 'http://h.test/' }));
    executor.respond(executor.take('http/request'), { status: 200, headers: [], bodyBase64: '' });
    response.values[0]!.body$.subscribe({ error: () => order.push('http body') });
    const removal = watch(client.fs.remove('/x'));
    client.fs.remove('/x').subscribe({ error: () => order.push('fs/remove') });
    client
      .startProcess({ processId: 'p2', argv: ['x'], cwd: '/' })
      .subscribe({ error: () => order.push('process start') });
    const removeRequest = executor.take('fs/remove');

    client.retire();

    expect(order).toEqual(['fs/remove', 'process start', 'process events', 'http body']);
    expect(client.state).toBe('retired');
    expect(transport.isClosed).toBe(true);
    // A result that arrives afterwards is not delivered (the transport is gone as well).
    executor.respond(removeRequest, {});
    expect(removal.values).toEqual([]);
    expect((removal.error as Error).message).toBe('exec-server executor was replaced');
  });

  it('makes every later observable error with "exec-server executor was replaced"', () => {
    const { client, executor } = connect({}, ENV_INFO);
    const handle = startProcess(client, executor);
    executor.notify('process/output', output('p1', 1, 'x'));
    client.retire();
    const observables: Observable<unknown>[] = [
      client.environmentInfo(),
      client.environmentStatus(),
      client.fs.readFile('/x'),
      client.http.request({ method: 'GET', url: 'http://h.test/' }),
      client.startProcess({ argv: ['x'], cwd: '/' }),
      client.resume(fakeConnection().transport),
      handle.events$,
      handle.stdout$,
      handle.exit$,
      handle.write('x'),
      handle.read(),
      handle.signal(),
      handle.terminate(),
    ];
    for (const observable of observables) {
      const seen = watch(observable);
      expect(seen.values).toEqual([]);
      expect(seen.error).toBeInstanceOf(DisconnectedError);
      expect((seen.error as Error).message).toBe('exec-server executor was replaced');
    }
  });

  it('is idempotent and keeps its first message', () => {
    const { client } = connect();
    client.retire('first');
    client.retire('second');
    client.fail('third');
    expect(client.state).toBe('retired');
    expect((watch(client.fs.readFile('/x')).error as Error).message).toBe('first');
  });
});
