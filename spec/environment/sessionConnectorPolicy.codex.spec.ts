/**
 * The environment layer's connector installs the caller's default network policy on every
 * session it opens (src/environment/sessionConnector.ts `ConnectOptions.networkPolicy`), against
 * the real `codex exec-server` 0.169.0: a process whose requests nobody watches is decided by
 * that policy, with the configured deadline. Every request is denied, so nothing leaves.
 */
import { expect, it } from '@jest/globals';
import { lastValueFrom, of, timeout, toArray } from 'rxjs';
import type { NetworkPolicyRequestParams } from '../../src/protocol/network.js';
import { connectSession } from '../../src/environment/sessionConnector.js';
import { LazyRemoteExecServerClient } from '../../src/environment/lazyRemoteClient.js';
import { webSocketUrl } from '../../src/environment/transportParams.js';
import { codexWorkspace, within } from '../support/codexWorkspace.js';
import { curlBehindProxy } from '../support/networkProxy.js';

const workspace = codexWorkspace('execrx-policy-');

it("the connector's session asks the caller's default policy", async () => {
  const asked: NetworkPolicyRequestParams[] = [];
  const { client } = await within(
    connectSession(
      { kind: 'websocket', url: workspace.server.url },
      {
        networkPolicy: (request) => {
          asked.push(request);
          return of({ type: 'deny' as const, reason: 'environment-policy' });
        },
      },
    ),
  );
  workspace.clients.push(client);
  const audits = lastValueFrom(client.networkPolicyDecisions$.pipe(toArray(), timeout(30_000)));
  const handle = await within(client.startProcess(curlBehindProxy(workspace.workDir)));
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

it("a lazy environment's sessions ask the policy it was given (LazyRemoteClientOptions.session)", async () => {
  const asked: string[] = [];
  const environment = new LazyRemoteExecServerClient(webSocketUrl(workspace.server.url), {
    session: {
      networkPolicy: (request) => {
        asked.push(request.request.host);
        return of({ type: 'deny' as const, reason: 'lazy-policy' });
      },
    },
  });
  try {
    const client = await within(environment.get());
    const handle = await within(client.startProcess(curlBehindProxy(workspace.workDir)));
    const out = await lastValueFrom(handle.stdout$.pipe(toArray(), timeout(30_000)));
    expect(Buffer.concat(out).toString('utf8')).toMatch(/^code=4\d\d$/);
    expect(asked).toEqual(['example.com']);
  } finally {
    environment.close();
  }
}, 60_000);
