/**
 * The environment layer's connector installs the caller's default network policy on every
 * session it opens (src/environment/sessionConnector.ts `ConnectOptions.networkPolicy`), against
 * the real `codex exec-server` 0.169.0: a process whose requests nobody watches is decided by
 * that policy, with the configured deadline. Every request is denied, so nothing leaves.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom, of, timeout, toArray, type Observable } from 'rxjs';
import type { ExecServerClient } from '../../src/client/index.js';
import type { NetworkPolicyRequestParams } from '../../src/protocol/network.js';
import { connectSession } from '../../src/environment/sessionConnector.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { CURL, PROXY } from '../support/networkProxy.js';

const within = <T>(source: Observable<T>): Promise<T> =>
  firstValueFrom(source.pipe(timeout(20_000)));

let server: RunningExecServer;
let workDir: string;
const clients: ExecServerClient[] = [];

beforeAll(async () => {
  server = await startCodexExecServer();
  workDir = realpathSync(await mkdtemp(join(tmpdir(), 'execrx-policy-')));
});

afterAll(async () => {
  for (const client of clients) client.close();
  await server?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

it("the connector's session asks the caller's default policy", async () => {
  const asked: NetworkPolicyRequestParams[] = [];
  const { client } = await within(
    connectSession(
      { kind: 'websocket', url: server.url },
      {
        networkPolicy: (request) => {
          asked.push(request);
          return of({ type: 'deny' as const, reason: 'environment-policy' });
        },
      },
    ),
  );
  clients.push(client);
  const audits = lastValueFrom(client.networkPolicyDecisions$.pipe(toArray(), timeout(30_000)));
  const handle = await within(
    client.startProcess({
      argv: CURL,
      cwd: workDir,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
      networkProxy: { proxy: PROXY, policyDecisionTimeoutMs: 10_000 },
    }),
  );
  const out = await lastValueFrom(handle.stdout$.pipe(toArray(), timeout(30_000)));
  expect(Buffer.concat(out).toString('utf8')).toMatch(/^code=4\d\d$/);
  expect(asked).toEqual([
    { processId: handle.processId, request: { protocol: 'http', host: 'example.com', port: 80 } },
  ]);
  client.close();
  expect((await audits).map((audit) => [audit.decision, audit.source, audit.reason])).toEqual([
    ['deny', 'decider', 'environment-policy'],
  ]);
}, 60_000);
