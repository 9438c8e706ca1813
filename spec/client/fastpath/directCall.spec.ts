/**
 * directCall (src/client/fastpath/directCall.ts) against its plain twin, the router's general
 * chain (bench/plain/client/fastpath/directCall.ts): for any result, executor error, transport
 * loss, session end or unsubscription, a caller sees the same values, error and completion,
 * and the executor the same requests.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Observable } from 'rxjs';
import { directCall as plainDirectCall } from '../../../bench/plain/client/fastpath/directCall.js';
import { CallRouter } from '../../../src/client/callRouter.js';
import { directCall } from '../../../src/client/fastpath/directCall.js';
import { SessionLifecycle } from '../../../src/client/sessionLifecycle.js';
import { DisconnectedError, NotFoundError, ServerError } from '../../../src/protocol/errors.js';
import type { ResultOf } from '../../../src/protocol/methods.js';
import { RpcConnection } from '../../../src/rpc/rpcConnection.js';
import { fakeConnection } from '../support/fakeExecutor.js';

type Implementation = typeof directCall;

/** What happens to the call after it is subscribed. */
type Step =
  | { kind: 'respond'; result: unknown }
  | { kind: 'fail'; code: number; message: string }
  | { kind: 'drop' }
  | { kind: 'end'; then: 'respond' | 'none' }
  | { kind: 'unsubscribe' }
  | { kind: 'recovering'; result: unknown };

const steps: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('respond' as const),
    result: fc.oneof(
      fc.record({ running: fc.boolean() }),
      fc.jsonValue({ maxDepth: 2 }),
      fc.record({ running: fc.jsonValue({ maxDepth: 1 }) }),
    ),
  }),
  fc.record({
    kind: fc.constant('fail' as const),
    code: fc.constantFrom(-32004, -32600, -32603, -32010),
    message: fc.string({ maxLength: 20 }),
  }),
  fc.constant({ kind: 'drop' as const }),
  fc.record({ kind: fc.constant('end' as const), then: fc.constantFrom('respond', 'none') }),
  fc.constant({ kind: 'unsubscribe' as const }),
  fc.record({ kind: fc.constant('recovering' as const), result: fc.boolean() }),
);

/** Runs `step` through `implementation`; returns what the caller and the executor saw. */
function run(implementation: Implementation, step: Step, throwingParams: boolean) {
  const lifecycle = new SessionLifecycle();
  const calls = new CallRouter({
    lifecycle,
    scheduler: undefined,
    recovery: true,
    transportLost: (rpc, reason) => {
      if (lifecycle.lose(rpc, new DisconnectedError(reason.message))) lifecycle.recover();
    },
  });
  let { transport, executor } = fakeConnection();
  lifecycle.install(new RpcConnection(transport));
  if (step.kind === 'recovering') {
    executor.end.drop('gone');
  }
  const params = () => {
    if (throwingParams) throw new Error('bad params');
    return { processId: 'p' };
  };
  const mapError = (error: unknown) =>
    error instanceof ServerError && error.code === -32004
      ? new NotFoundError(error.serverMessage, '/x')
      : error;
  const call: Observable<ResultOf<'process/terminate'>> = implementation(
    calls,
    'process/terminate',
    params,
    mapError,
    () => calls.chain('process/terminate', params, { mapError }),
  );
  const seen: { values: unknown[]; error?: string; complete: boolean; requests: unknown[] } = {
    values: [],
    complete: false,
    requests: [],
  };
  const subscription = call.subscribe({
    next: (value) => seen.values.push(value),
    error: (error: unknown) =>
      (seen.error = `${(error as Error).constructor.name}: ${(error as Error).message}`),
    complete: () => (seen.complete = true),
  });
  const pending = () => executor.pending('process/terminate');
  switch (step.kind) {
    case 'respond':
      if (pending()[0]) executor.respond(pending()[0]!, step.result);
      break;
    case 'fail':
      if (pending()[0]) executor.fail(pending()[0]!, step.code, step.message);
      break;
    case 'drop':
      executor.end.drop('gone');
      break;
    case 'end': {
      const replaced = new DisconnectedError('exec-server executor was replaced');
      lifecycle.end('retired', replaced);
      calls.abortAll(replaced);
      if (step.then === 'respond' && pending()[0])
        executor.respond(pending()[0]!, { running: true });
      break;
    }
    case 'unsubscribe':
      subscription.unsubscribe();
      if (pending()[0]) executor.respond(pending()[0]!, { running: true });
      break;
    case 'recovering': {
      seen.requests.push('before resume');
      ({ transport, executor } = fakeConnection());
      lifecycle.install(new RpcConnection(transport));
      if (pending()[0]) executor.respond(pending()[0]!, { running: step.result });
      break;
    }
  }
  seen.requests.push(...executor.requests.map((request) => [request.method, request.params]));
  return seen;
}

describe('directCall (fast path) against the general chain (plain twin)', () => {
  it('gives the caller and the executor the same outcome in every case', () => {
    fc.assert(
      fc.property(steps, fc.boolean(), (step, throwingParams) => {
        expect(run(directCall, step, throwingParams)).toEqual(
          run(plainDirectCall, step, throwingParams),
        );
      }),
      { numRuns: 500 },
    );
  });
});
