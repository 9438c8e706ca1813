/**
 * Per-session and per-connection limits of the executor (issue #14, "bounded resources"):
 * MAX_LIVE_PROCESSES_PER_SESSION running processes, MAX_OPEN_FILE_HANDLES open file handles,
 * MAX_PENDING_REQUESTS requests awaiting an answer.
 * One more is refused with a clear -32600, other clients are not affected, and freeing one
 * makes room again.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pathToFileUri } from '../../src/protocol/pathUri.js';
import {
  MAX_PENDING_REQUESTS,
  TOO_MANY_PENDING_REQUESTS,
} from '../../src/server/connectionProcessor.js';
import { MAX_OPEN_FILE_HANDLES } from '../../src/server/fileHandles.js';
import { MAX_LIVE_PROCESSES_PER_SESSION } from '../../src/server/processManager.js';
import type { RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { RawClient, startParams } from './rawClient.js';

let server: RunningExecServer;
beforeAll(async () => {
  server = await startTsExecServer();
});
afterAll(() => server.stop());

describe('processes per session', () => {
  it('refuses one start past the limit, leaves other sessions alone, and frees a closed place', async () => {
    const hog = await RawClient.connect(server.url);
    await hog.handshake();
    const ids = Array.from({ length: MAX_LIVE_PROCESSES_PER_SESSION }, (_, index) =>
      hog.post('process/start', startParams(`p${index}`, ['sleep', '60'])),
    );
    for (const id of ids) expect((await hog.response(id, 60_000)).error).toBeUndefined();

    const refused = await hog.request('process/start', startParams('one-more', ['true']));
    expect(refused.error).toEqual({
      code: -32600,
      message: `at most ${MAX_LIVE_PROCESSES_PER_SESSION} processes may run per session; terminate one or wait for one to close`,
    });

    const other = await RawClient.connect(server.url);
    await other.handshake();
    await other.call('process/start', startParams('elsewhere', ['true']));
    await other.waitClosedNotification('elsewhere', 10_000);

    await hog.call('process/terminate', { processId: 'p0' });
    await hog.waitClosedNotification('p0', 10_000);
    await hog.call('process/start', startParams('in-its-place', ['true']));
    await Promise.all([hog.terminate(), other.terminate()]);
  }, 120_000);
});

describe('file handles per connection', () => {
  it('refuses one open past the limit, leaves other connections alone, and frees a closed one', async () => {
    const path = pathToFileUri(new URL(import.meta.url).pathname);
    const hog = await RawClient.connect(server.url);
    await hog.handshake();
    const ids = Array.from({ length: MAX_OPEN_FILE_HANDLES }, (_, index) =>
      hog.post('fs/open', { handleId: `h${index}`, path, mode: 'read' }),
    );
    for (const id of ids) expect((await hog.response(id, 30_000)).error).toBeUndefined();
    const refused = await hog.request('fs/open', { handleId: 'one-more', path, mode: 'read' });
    expect(refused.error).toEqual({
      code: -32600,
      message: `at most ${MAX_OPEN_FILE_HANDLES} file handles may be open per connection`,
    });
    const other = await RawClient.connect(server.url);
    await other.handshake();
    await other.call('fs/open', { handleId: 'elsewhere', path, mode: 'read' });
    await hog.call('fs/close', { handleId: 'h0' });
    await hog.call('fs/open', { handleId: 'in-its-place', path, mode: 'read' });
    await Promise.all([hog.terminate(), other.terminate()]);
  }, 60_000);
});

describe('requests awaiting an answer per connection', () => {
  it('refuses one more at once, answers the waiting ones, and leaves other connections alone', async () => {
    const hog = await RawClient.connect(server.url);
    await hog.handshake();
    await hog.call('process/start', startParams('quiet', ['sleep', '60']));
    const read = { processId: 'quiet', afterSeq: 0, maxBytes: null, waitMs: 3_000 };
    const waiting = Array.from({ length: MAX_PENDING_REQUESTS }, () =>
      hog.post('process/read', read),
    );
    const refused = await hog.request('process/read', read, 2_000);
    expect(refused.error).toEqual({ code: -32600, message: TOO_MANY_PENDING_REQUESTS });
    const other = await RawClient.connect(server.url);
    await other.handshake();
    expect(await other.call('environment/info', null, 2_000)).toHaveProperty('shell');
    for (const id of waiting) expect((await hog.response(id, 30_000)).error).toBeUndefined();
    await hog.call('process/read', { ...read, waitMs: 0 });
    await Promise.all([hog.terminate(), other.terminate()]);
  }, 60_000);
});
