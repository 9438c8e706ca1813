/**
 * Timing and routing rules of src/client/sessionCalls.ts against the in-memory fake executor:
 * discovery v1 replays once after a recovery within 8 s (marble), sandboxed roots need the
 * capability, uncached environment info always asks, `process(id)` routes by id.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { TestScheduler } from 'rxjs/testing';
import { ExecServerClient, type ExecServerClientOptions } from '../../src/client/index.js';
import { DisconnectedError, ProtocolError } from '../../src/protocol/errors.js';
import { base64, fakeConnection } from './support/fakeExecutor.js';
import { EMPTY_READ, connectFake, watch } from './support/fakeClient.js';

const opened: ExecServerClient[] = [];
afterEach(() => {
  for (const client of opened.splice(0)) client.close();
});

const INFO = (capabilityDiscoverySandbox: boolean) => ({
  shell: { name: 'bash', path: '/bin/bash' },
  capabilities: { capabilityDiscoverySandbox },
});

function connect(options: Partial<ExecServerClientOptions> = {}, info?: unknown) {
  return connectFake(opened, options, info);
}

const DISCOVERED = {
  roots: [{ id: 'r', path: 'file:///r', skills: [], namespaceManifests: [], warnings: [] }],
};

describe('capabilityRoots/discoverV1', () => {
  it('is replayed once on the resumed transport when the session recovers in time', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    const { client, executor } = connect({ recovery: true, scheduler });
    const next = fakeConnection('session-1');
    let result: ReturnType<typeof watch> | undefined;
    scheduler.run(() => {
      result = watch(client.discoverCapabilityRoots([{ id: 'r', path: '/r' }]));
      expect(executor.take('capabilityRoots/discoverV1').params).toEqual({
        roots: [{ id: 'r', path: 'file:///r' }],
      });
      executor.end.close();
      scheduler
        .createColdObservable('7999ms a')
        .subscribe(() => watch(client.resume(next.transport)));
    });
    next.executor.respond(next.executor.take('capabilityRoots/discoverV1'), DISCOVERED);
    expect(result!.values).toEqual([DISCOVERED]);
  });

  it('fails with the loss when the session is still recovering after 8 s', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    const { client, executor } = connect({ recovery: true, scheduler });
    let failedAt: number | undefined;
    let result: ReturnType<typeof watch> | undefined;
    scheduler.run(() => {
      result = watch(client.discoverCapabilityRoots([{ id: 'r', path: '/r' }]));
      executor.end.close();
      scheduler.createColdObservable('7999ms a').subscribe(() => {
        expect(result!.error).toBeUndefined();
      });
      scheduler.createColdObservable('8000ms a').subscribe(() => {
        failedAt = result!.error === undefined ? undefined : scheduler.now();
      });
    });
    expect(failedAt).toBe(8000);
    expect(result!.error).toBeInstanceOf(DisconnectedError);
    expect((result!.error as Error).message).toBe('exec-server transport disconnected');
  });

  it('a sandboxed root needs capabilityDiscoverySandbox', () => {
    const { client, executor } = connect({}, INFO(false));
    const result = watch(
      client.discoverCapabilityRoots([{ id: 'r', path: '/r', sandbox: { kind: 'x' } }]),
    );
    expect(result.error).toBeInstanceOf(ProtocolError);
    expect(executor.pending('capabilityRoots/discoverV1')).toEqual([]);
    const { client: able, executor: ableExecutor } = connect({}, INFO(true));
    watch(able.discoverCapabilityRoots([{ id: 'r', path: '/r', sandbox: { kind: 'x' } }]));
    expect(ableExecutor.take('capabilityRoots/discoverV1').params).toEqual({
      roots: [{ id: 'r', path: 'file:///r', sandbox: { kind: 'x' } }],
    });
  });
});

describe('forceEnvironmentInfo', () => {
  it('asks every time, even with the info cached from initialize', () => {
    const { client, executor } = connect({}, INFO(false));
    watch(client.environmentInfo());
    expect(executor.pending('environment/info')).toEqual([]);
    watch(client.forceEnvironmentInfo());
    watch(client.forceEnvironmentInfo());
    expect(executor.pending('environment/info')).toHaveLength(2);
  });
});

describe('process(id)', () => {
  it('routes events and calls of an existing process by id', () => {
    const { client, executor } = connect();
    const handle = client.process('p9');
    const out = watch(handle.stdout$);
    executor.notify('process/output', {
      processId: 'p9',
      seq: 1,
      stream: 'stdout',
      chunk: base64('x'),
    });
    expect(out.values.map((bytes) => Buffer.from(bytes).toString())).toEqual(['x']);
    watch(handle.signal());
    expect(executor.take('process/signal').params).toEqual({
      processId: 'p9',
      signal: 'interrupt',
    });
    // The same route twice: a second handle shares it.
    const twin = client.process('p9');
    expect(twin.processId).toBe('p9');
  });
});

describe('recovery and in-flight starts', () => {
  it('a start in flight when the transport drops is settled before the catch-up reads', () => {
    const { client, executor } = connect({ recovery: true });
    const running = watch(client.startProcess({ processId: 'old', argv: ['cat'], cwd: '/tmp' }));
    executor.respond(executor.take('process/start'), { processId: 'old', sandboxType: 'none' });
    const starting = watch(client.startProcess({ processId: 'new', argv: ['cat'], cwd: '/tmp' }));
    expect(executor.pending('process/start')).toHaveLength(1);
    executor.end.close();
    // Settled by the loss itself: the caller sees it, and the start is not recoverable.
    expect((starting.error as Error).message).toBe('exec-server transport disconnected');
    const next = fakeConnection('session-1');
    watch(client.resume(next.transport));
    const reads = next.executor.pending('process/read');
    expect(reads.map((r) => (r.params as { processId: string }).processId)).toEqual(['old']);
    next.executor.respond(reads[0]!, EMPTY_READ);
    // Then the abandoned start is cleaned up on the resumed transport (it may have started).
    expect(next.executor.take('process/terminate').params).toEqual({ processId: 'new' });
    expect(running.values).toHaveLength(1);
  });
});

describe('traceContext', () => {
  it("every request carries the caller's current trace, on resumed transports too", () => {
    const parent = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    let current: { traceparent: string } | undefined = parent;
    const { transport, executor } = fakeConnection('session-1');
    const raw: string[] = [];
    executor.end.incoming$.subscribe((text) => raw.push(text));
    let client: ExecServerClient | undefined;
    ExecServerClient.connect(transport, {
      clientName: 'spec',
      recovery: true,
      traceContext: () => current,
    }).subscribe((c) => (client = c));
    opened.push(client!);
    watch(client!.forceEnvironmentInfo());
    current = undefined;
    watch(client!.forceEnvironmentInfo());
    current = parent;
    executor.end.close();
    const next = fakeConnection('session-1');
    const resumedRaw: string[] = [];
    next.executor.end.incoming$.subscribe((text) => resumedRaw.push(text));
    watch(client!.resume(next.transport));
    const traces = (texts: string[]) =>
      texts
        .map((text) => JSON.parse(text) as { method?: string; trace?: unknown })
        .filter((message) => message.method !== 'initialized')
        .map((message) => [message.method, message.trace]);
    expect(traces(raw)).toEqual([
      ['initialize', parent],
      ['environment/info', parent],
      ['environment/info', undefined],
    ]);
    expect(traces(resumedRaw)).toEqual([['initialize', parent]]);
  });
});
