/**
 * The lazy client against the real `codex exec-server` 0.169.0 over plain WebSocket: a
 * connection cut by the network is recovered on the same session (the binary may still hold
 * the old connection and answer -32010 until it notices; recovery retries), the running
 * process keeps its output stream, and a write interrupted by the cut lands once.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { filter, firstValueFrom, lastValueFrom, scan, take, toArray } from 'rxjs';
import { LazyRemoteExecServerClient, webSocketUrl } from '../../src/environment/index.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startDroppingProxy, type DroppingProxy } from '../support/droppingProxy.js';
import { CAT_WITH_STDIN } from '../support/catProcess.js';

let codex: RunningExecServer | undefined;
let proxy: DroppingProxy | undefined;
let client: LazyRemoteExecServerClient | undefined;

afterEach(async () => {
  client?.close();
  client = undefined;
  await proxy?.close();
  proxy = undefined;
  await codex?.stop();
  codex = undefined;
});

/** A TCP proxy to `upstreamUrl` whose connections can be reset. */
async function startProxy(upstreamUrl: string): Promise<string> {
  proxy = await startDroppingProxy(upstreamUrl);
  return proxy.url;
}

const cut = () => proxy?.drop();

describe('LazyRemoteExecServerClient against codex exec-server 0.169.0', () => {
  it('recovers the same session after a network cut; output and stdin continue exactly once', async () => {
    codex = await startCodexExecServer();
    client = new LazyRemoteExecServerClient(webSocketUrl(await startProxy(codex.url)));
    const session = await firstValueFrom(client.get());
    const cat = await firstValueFrom(session.startProcess(CAT_WITH_STDIN));
    const expected = 'before\nduring\nafter\n';
    // cat may echo two writes as one chunk: compare the accumulated text.
    const echoed = firstValueFrom(
      cat.stdout$.pipe(
        scan((text, chunk) => text + Buffer.from(chunk).toString(), ''),
        filter((text) => text.length >= expected.length),
      ),
    );
    await firstValueFrom(cat.write('before\n'));
    // Give cat time to echo, so "before" is published before the cut.
    await firstValueFrom(cat.events$.pipe(filter((event) => event.type === 'output')));
    const states = lastValueFrom(client.connectionState$.pipe(take(3), toArray()));
    const interrupted = firstValueFrom(cat.write('during\n'));
    cut();
    await interrupted;
    await firstValueFrom(session.state$.pipe(filter((state) => state === 'connected')));
    await firstValueFrom(cat.write('after\n'));
    expect(await echoed).toBe(expected);
    expect(await states).toEqual(['Connected', 'Disconnected', 'Connected']);
    expect(await firstValueFrom(client.get())).toBe(session);
    expect(await firstValueFrom(session.environmentStatus())).toBe('ready');
    await firstValueFrom(cat.terminate());
  }, 30_000);
});
