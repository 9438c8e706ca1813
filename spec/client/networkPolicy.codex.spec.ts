/**
 * Network policy as Observables against the real `codex exec-server` 0.169.0: a process started
 * with an executor-local network proxy asks for `example.com`; a UI watching the handle answers
 * deny, and the executor's `network/policyDecision` audit names the client's decision. Nothing
 * ever leaves the machine: every request is denied, and loopback targets are refused by the
 * executor's baseline policy.
 */
import { expect, it } from '@jest/globals';
import { lastValueFrom, take, timeout, toArray } from 'rxjs';
import { ExecServerClient, type NetworkPolicyPrompt } from '../../src/client/index.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import { codexWorkspace, within } from '../support/codexWorkspace.js';
import { curlBehindProxy } from '../support/networkProxy.js';

const workspace = codexWorkspace('execrx-policy-');

it('a UI watching the handle denies the request; the audit names the decision', async () => {
  const transport = await within(connectWebSocket(workspace.server.url));
  const client = await within(ExecServerClient.connect(transport, { clientName: 'execrx-spec' }));
  workspace.clients.push(client);
  const audits = lastValueFrom(
    client.networkPolicyDecisions$.pipe(take(1), toArray(), timeout(30_000)),
  );
  const handle = await within(
    client.startProcess({ ...curlBehindProxy(workspace.workDir), networkPolicy: 'prompt' }),
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
