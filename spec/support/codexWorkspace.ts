/**
 * A spec file's real `codex exec-server` and scratch directory, started before its tests and
 * stopped after them, with the clients the tests opened closed first.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, timeout, type Observable } from 'rxjs';
import type { ExecServerClient } from '../../src/client/index.js';
import { startCodexExecServer, type RunningExecServer } from './codexExecServer.js';

export interface CodexWorkspace {
  /** Set once `beforeAll` ran. */
  server: RunningExecServer;
  workDir: string;
  /** Closed after the file's tests. */
  readonly clients: ExecServerClient[];
}

export function codexWorkspace(prefix: string): CodexWorkspace {
  const workspace = { clients: [] } as unknown as CodexWorkspace;
  beforeAll(async () => {
    workspace.server = await startCodexExecServer();
    workspace.workDir = realpathSync(await mkdtemp(join(tmpdir(), prefix)));
  });
  afterAll(async () => {
    for (const client of workspace.clients) client.close();
    await workspace.server?.stop();
    if (workspace.workDir) await rm(workspace.workDir, { recursive: true, force: true });
  });
  return workspace;
}

/** The first value, or a TimeoutError after 20 s instead of a hang. */
export const within = <T>(source: Observable<T>): Promise<T> =>
  firstValueFrom(source.pipe(timeout(20_000)));
