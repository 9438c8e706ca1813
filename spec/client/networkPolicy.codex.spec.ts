/**
 * Network policy as Observables against the real `codex exec-server` 0.169.0: a process started
 * with an executor-local network proxy asks for `example.com`; a UI watching the handle answers
 * deny, and the executor's `network/policyDecision` audit names the client's decision. Nothing
 * ever leaves the machine: every request is denied, and loopback targets are refused by the
 * executor's baseline policy.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom, take, timeout, toArray, type Observable } from 'rxjs';
import { ExecServerClient, type NetworkPolicyPrompt } from '../../src/client/index.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
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

it('a UI watching the handle denies the request; the audit names the decision', async () => {
  const transport = await within(connectWebSocket(server.url));
  const client = await within(ExecServerClient.connect(transport, { clientName: 'execrx-spec' }));
  clients.push(client);
  const audits = lastValueFrom(
    client.networkPolicyDecisions$.pipe(take(1), toArray(), timeout(30_000)),
  );
  const handle = await within(
    client.startProcess({
      argv: CURL,
      cwd: workDir,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
      networkProxy: { proxy: PROXY, policyDecisionTimeoutMs: 10_000 },
      networkPolicy: 'prompt',
    }),
  );
  const seen: NetworkPolicyPrompt[] = [];
  handle.networkPolicyRequests$.subscribe((prompt) => {
    seen.push(prompt);
    prompt.deny('execrx-ui');
  });
  const out = await lastValueFrom(handle.stdout$.pipe(toArray(), timeout(30_000)));
  expect(Buffer.concat(out).toString('utf8')).toMatch(/^code=4\d\d$/);
  expect(seen.map((prompt) => prompt.request)).toEqual([
    { protocol: 'http', host: 'example.com', port: 80 },
  ]);
  const [audit] = await audits;
  expect(audit).toMatchObject({
    processId: handle.processId,
    decision: 'deny',
    source: 'decider',
    host: 'example.com',
    port: 80,
  });
}, 60_000);
