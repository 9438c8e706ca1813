/** A client connected to the in-memory fake executor, and a synchronous observer for specs. */
import type { Observable } from 'rxjs';
import { ExecServerClient, type ExecServerClientOptions } from '../../../src/client/index.js';
import { fakeConnection } from './fakeExecutor.js';

/** Connects synchronously over an in-memory pair (the fake answers initialize at once). */
export function connectFake(
  opened: ExecServerClient[],
  options: Partial<ExecServerClientOptions> = {},
  environmentInfo?: unknown,
) {
  const { transport, executor } = fakeConnection('session-1', environmentInfo);
  let client: ExecServerClient | undefined;
  ExecServerClient.connect(transport, { clientName: 'spec', ...options }).subscribe(
    (c) => (client = c),
  );
  if (client === undefined) throw new Error('connect did not complete synchronously');
  opened.push(client);
  return { client, executor, transport };
}

/** Subscribes and records what an observable does, synchronously. */
export function watch<T>(source: Observable<T>) {
  const seen: { values: T[]; error?: unknown; completed: boolean } = {
    values: [],
    completed: false,
  };
  source.subscribe({
    next: (value) => seen.values.push(value),
    error: (error: unknown) => (seen.error = error),
    complete: () => (seen.completed = true),
  });
  return seen;
}

/** A `process/read` result with nothing in it, for the fields a test does not care about. */
export const EMPTY_READ = {
  chunks: [],
  nextSeq: 1,
  exited: false,
  exitCode: null,
  closed: false,
  failure: null,
  sandboxDenied: false,
};
