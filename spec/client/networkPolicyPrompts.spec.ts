/**
 * Network policy requests as Observables (src/client/networkPolicyPrompts.ts): marble tests of
 * the timing rules — per-request deadline, cancellation when the process ends, the session is
 * retired or its transport lost — plus the default policy, the in-flight cap and the audits.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { NEVER, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  ExecServerClient,
  type ExecServerClientOptions,
  type NetworkPolicyPrompt,
  type ProcessHandle,
} from '../../src/client/index.js';
import { fakeConnection, type FakeExecutor } from './support/fakeExecutor.js';

const opened: ExecServerClient[] = [];
afterEach(() => {
  for (const client of opened.splice(0)) client.close();
});

const NOT_ALLOWED = { type: 'deny', reason: 'not_allowed' };

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

function connect(scheduler: TestScheduler, options: Partial<ExecServerClientOptions> = {}) {
  const { transport, executor } = fakeConnection('session-1');
  let client: ExecServerClient | undefined;
  ExecServerClient.connect(transport, {
    clientName: 'spec',
    scheduler,
    networkPolicyTimeoutMs: 1000,
    ...options,
  }).subscribe((c) => (client = c));
  if (client === undefined) throw new Error('connect did not complete synchronously');
  opened.push(client);
  return { client, executor, transport };
}

function start(
  client: ExecServerClient,
  executor: FakeExecutor,
  processId = 'p1',
  policyDecisionTimeoutMs?: number,
  networkPolicy?: 'prompt',
): ProcessHandle {
  let handle: ProcessHandle | undefined;
  client
    .startProcess({
      processId,
      ...(networkPolicy ? { networkPolicy } : {}),
      argv: ['curl', 'example.test'],
      cwd: '/tmp',
      ...(policyDecisionTimeoutMs === undefined
        ? {}
        : { networkProxy: { proxy: {}, policyDecisionTimeoutMs } }),
    })
    .subscribe((h) => (handle = h));
  executor.respond(executor.take('process/start'), { processId, sandboxType: 'none' });
  if (handle === undefined) throw new Error('start failed');
  return handle;
}

function ask(executor: FakeExecutor, id: number, processId = 'p1', host = 'example.test') {
  executor.request(id, 'network/policyRequest', {
    processId,
    request: { protocol: 'https_connect', host, port: 443 },
  });
}

/** Watches a handle's prompts; returns the list they land in. */
function watchPrompts(handle: ProcessHandle): NetworkPolicyPrompt[] {
  const prompts: NetworkPolicyPrompt[] = [];
  handle.networkPolicyRequests$.subscribe((prompt) => prompts.push(prompt));
  return prompts;
}

function at(scheduler: TestScheduler, marble: string, act: () => void): void {
  scheduler.createColdObservable(marble).subscribe(act);
}

describe('network policy prompts', () => {
  it('a watched request is answered by the UI before its deadline', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    scheduler.run(({ expectObservable }) => {
      const prompts = watchPrompts(start(client, executor));
      ask(executor, 1);
      const prompt = prompts[0]!;
      expect(prompt.request).toEqual({
        protocol: 'https_connect',
        host: 'example.test',
        port: 443,
      });
      expect(prompt.deadline).toBe(1000);
      at(scheduler, '300ms a', () => expect(prompt.allow()).toBe(true));
      expectObservable(prompt.outcome$).toBe('300ms (a|)', {
        a: { type: 'answered', decision: { type: 'allow' } },
      });
    });
    expect(executor.replies).toEqual([{ id: 1, result: { decision: { type: 'allow' } } }]);
  });

  it('an unanswered prompt is denied at its deadline; a later answer is refused', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    let late: boolean | undefined;
    scheduler.run(({ expectObservable }) => {
      const prompts = watchPrompts(start(client, executor));
      ask(executor, 1);
      const prompt = prompts[0]!;
      at(scheduler, '1500ms a', () => (late = prompt.ask('too late')));
      expectObservable(prompt.outcome$).toBe('1000ms (t|)', { t: { type: 'timedOut' } });
    });
    expect(late).toBe(false);
    expect(executor.replies).toEqual([{ id: 1, result: { decision: NOT_ALLOWED } }]);
  });

  it("the process's networkProxy.policyDecisionTimeoutMs is its deadline", () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    scheduler.run(({ expectObservable }) => {
      const prompts = watchPrompts(start(client, executor, 'p1', 250));
      ask(executor, 1);
      expect(prompts[0]!.deadline).toBe(250);
      expectObservable(prompts[0]!.outcome$).toBe('250ms (t|)', { t: { type: 'timedOut' } });
    });
  });

  it('a pending prompt is denied when its process ends, and the watch completes', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    scheduler.run(({ expectObservable }) => {
      const handle = start(client, executor);
      const prompts = watchPrompts(handle);
      ask(executor, 1);
      at(scheduler, '200ms a', () => {
        executor.notify('process/exited', { processId: 'p1', seq: 1, exitCode: 0 });
        executor.notify('process/closed', { processId: 'p1', seq: 2 });
      });
      expectObservable(prompts[0]!.outcome$).toBe('200ms (c|)', {
        c: { type: 'cancelled', reason: 'process ended' },
      });
    });
    expect(executor.replies).toEqual([{ id: 1, result: { decision: NOT_ALLOWED } }]);
  });

  it('retiring the session drops a pending prompt without an answer', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    let completed = false;
    scheduler.run(({ expectObservable }) => {
      const handle = start(client, executor);
      const prompts: NetworkPolicyPrompt[] = [];
      handle.networkPolicyRequests$.subscribe({
        next: (prompt) => prompts.push(prompt),
        complete: () => (completed = true),
      });
      ask(executor, 1);
      at(scheduler, '200ms a', () => client.retire());
      expectObservable(prompts[0]!.outcome$).toBe('200ms (c|)', {
        c: { type: 'cancelled', reason: 'exec-server executor was replaced' },
      });
    });
    expect(completed).toBe(true);
    expect(executor.replies).toEqual([]);
  });

  it('losing the transport drops a pending prompt; the session recovers', () => {
    const scheduler = newScheduler();
    const { client, executor, transport } = connect(scheduler, { recovery: true });
    scheduler.run(({ expectObservable }) => {
      const prompts = watchPrompts(start(client, executor));
      ask(executor, 1);
      at(scheduler, '100ms a', () => transport.close());
      expectObservable(prompts[0]!.outcome$).toBe('100ms (c|)', {
        c: { type: 'cancelled', reason: 'exec-server transport disconnected' },
      });
    });
    expect(client.state).toBe('recovering');
    expect(executor.replies).toEqual([]);
  });
});

describe("networkPolicy: 'prompt'", () => {
  it('requests wait for the first watcher, within their deadline', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    scheduler.run(() => {
      const handle = start(client, executor, 'p1', undefined, 'prompt');
      ask(executor, 1);
      at(scheduler, '200ms a', () => ask(executor, 2));
      const prompts: NetworkPolicyPrompt[] = [];
      at(scheduler, '1100ms a', () =>
        handle.networkPolicyRequests$.subscribe((prompt) => {
          prompts.push(prompt);
          prompt.allow();
        }),
      );
      at(scheduler, '1300ms a', () => {
        expect(prompts.map((prompt) => prompt.deadline)).toEqual([1200]);
      });
    });
    expect(executor.replies).toEqual([
      { id: 1, result: { decision: NOT_ALLOWED } },
      { id: 2, result: { decision: { type: 'allow' } } },
    ]);
  });

  it('held requests that timed out are not handed to a later watcher', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    const prompts: NetworkPolicyPrompt[] = [];
    scheduler.run(() => {
      const handle = start(client, executor, 'p1', undefined, 'prompt');
      for (let id = 1; id <= 3; id++) ask(executor, id);
      at(scheduler, '2000ms a', () =>
        handle.networkPolicyRequests$.subscribe((prompt) => prompts.push(prompt)),
      );
    });
    expect(prompts).toEqual([]);
    expect(executor.replies).toHaveLength(3);
  });
});

describe('default network policy', () => {
  it('denies at once without a watcher or handler', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    start(client, executor);
    ask(executor, 1);
    expect(executor.replies).toEqual([{ id: 1, result: { decision: NOT_ALLOWED } }]);
  });

  it('asks the default handler while nobody watches, bounded by the deadline', () => {
    const scheduler = newScheduler();
    const decide = (request: {
      request: { host: string };
    }): Observable<never> | Observable<{ type: 'allow' }> =>
      request.request.host === 'slow.test'
        ? NEVER
        : scheduler.createColdObservable('10ms a', { a: { type: 'allow' as const } });
    const { client, executor } = connect(scheduler, { handleNetworkPolicyRequest: decide });
    scheduler.run(() => {
      start(client, executor);
      ask(executor, 1, 'p1', 'slow.test');
      ask(executor, 2, 'p1', 'fast.test');
    });
    expect(executor.replies).toEqual([
      { id: 2, result: { decision: { type: 'allow' } } },
      { id: 1, result: { decision: NOT_ALLOWED } },
    ]);
  });

  it('a request for another process, or after the watcher left, goes to the default', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    const handle = start(client, executor);
    start(client, executor, 'p2');
    const prompts: NetworkPolicyPrompt[] = [];
    const watch = handle.networkPolicyRequests$.subscribe((prompt) => prompts.push(prompt));
    ask(executor, 1, 'p2');
    watch.unsubscribe();
    ask(executor, 2, 'p1');
    ask(executor, 3, 'unknown');
    expect(prompts).toEqual([]);
    expect(executor.replies).toEqual([
      { id: 1, result: { decision: NOT_ALLOWED } },
      { id: 2, result: { decision: NOT_ALLOWED } },
      { id: 3, result: { decision: NOT_ALLOWED } },
    ]);
  });

  it('a UI reason with control characters is replaced by not_allowed', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    const prompts = watchPrompts(start(client, executor));
    ask(executor, 1);
    prompts[0]!.deny('bad\u0007');
    expect(executor.replies).toEqual([{ id: 1, result: { decision: NOT_ALLOWED } }]);
  });
});

describe('in-flight cap', () => {
  it('past 256 pending requests the next is denied at once; room frees when one is answered', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    const prompts = watchPrompts(start(client, executor));
    for (let id = 1; id <= 256; id++) ask(executor, id);
    expect(prompts).toHaveLength(256);
    ask(executor, 257);
    expect(prompts).toHaveLength(256);
    expect(executor.replies).toEqual([{ id: 257, result: { decision: NOT_ALLOWED } }]);
    prompts[0]!.ask('confirm?');
    ask(executor, 258);
    expect(prompts).toHaveLength(257);
    expect(executor.replies).toEqual([
      { id: 257, result: { decision: NOT_ALLOWED } },
      { id: 1, result: { decision: { type: 'ask', reason: 'confirm?' } } },
    ]);
  });
});

describe('network/policyDecision audits', () => {
  it('are emitted for known processes; malformed and unknown ones are ignored', () => {
    const scheduler = newScheduler();
    const { client, executor } = connect(scheduler);
    const handle = start(client, executor);
    start(client, executor, 'p2');
    const all: unknown[] = [];
    const mine: unknown[] = [];
    let completed = false;
    client.networkPolicyDecisions$.subscribe({
      next: (record) => all.push(record.processId),
      complete: () => (completed = true),
    });
    handle.networkPolicyDecisions$.subscribe((record) => mine.push(record));
    const record = (processId: string) => ({
      processId,
      timestamp: '2026-12-01T00:00:00.000Z',
      scope: 'domain',
      decision: 'deny',
      source: 'baseline_policy',
      reason: 'not_allowed',
      protocol: 'http',
      host: 'example.test',
      port: 80,
    });
    executor.notify('network/policyDecision', record('p1'));
    executor.notify('network/policyDecision', record('p2'));
    executor.notify('network/policyDecision', record('nobody'));
    executor.notify('network/policyDecision', { processId: 'p1', host: 3 });
    expect(all).toEqual(['p1', 'p2']);
    expect(mine).toEqual([{ ...record('p1'), policyOverride: false }]);
    expect(client.state).toBe('connected');
    client.retire();
    expect(completed).toBe(true);
  });
});
