/**
 * LazyRemoteExecServerClient over real 127.0.0.1 sockets: connect-once, shared attempts,
 * connectionState$, fail-fast access, remembered vs retried startup failures, recovery over
 * plain WebSocket and Noise (registration renewal, executor key change), provisioning.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type AddressInfo } from 'node:net';
import { filter, firstValueFrom, lastValueFrom, toArray, take } from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import {
  ConnectionAttemptError,
  Environment,
  EnvironmentManager,
  LazyRemoteExecServerClient,
  ProvisioningFailedError,
  ProvisioningModeConflictError,
  noiseRendezvous,
  type ConnectionAttemptReport,
  webSocketUrl,
} from '../../src/environment/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { DisconnectedError, ProtocolError } from '../../src/protocol/errors.js';
import { startExecServer } from '../../src/server/index.js';
import { startDirectNoiseExecServer } from '../../src/server/relay/index.js';
import {
  ControlledValidator,
  RecordingHarness,
  closeAllExecutors,
  startTestExecutor,
} from './support/testExecutors.js';
import { TestRegistry } from './support/testRegistry.js';
import { startDroppingProxy, type DroppingProxy } from '../support/droppingProxy.js';
import { CAT_WITH_STDIN } from '../support/catProcess.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await closeAllExecutors();
});

/** A dropping proxy in front of `upstreamUrl`, closed after the test. */
async function droppingProxy(upstreamUrl: string): Promise<DroppingProxy> {
  const proxy = await startDroppingProxy(upstreamUrl);
  cleanups.push(() => proxy.close());
  return proxy;
}

async function plainExecutor(): Promise<string> {
  const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  cleanups.push(() => server.close());
  return server.url;
}

function track(client: LazyRemoteExecServerClient): LazyRemoteExecServerClient {
  cleanups.push(() => client.close());
  return client;
}

function noiseClient(registry: TestRegistry, harness = new RecordingHarness()) {
  const client = track(
    new LazyRemoteExecServerClient(
      noiseRendezvous(registry, NoiseChannelIdentity.generate(), {
        connectHarness: harness.connect,
      }),
    ),
  );
  return { client, harness };
}

const nextState = (session: ExecServerClient, wanted: string) =>
  firstValueFrom(session.state$.pipe(filter((state) => state === wanted)));

describe('LazyRemoteExecServerClient over plain WebSocket', () => {
  it('connects on first use; concurrent get() callers share one attempt and one session', async () => {
    const proxy = await droppingProxy(await plainExecutor());
    const client = track(new LazyRemoteExecServerClient(webSocketUrl(proxy.url)));
    const attempts: ConnectionAttemptReport[] = [];
    client.connectionAttempts$.subscribe((report) => attempts.push(report));
    expect(client.connectionState).toBe('Disconnected');
    expect(proxy.connections).toBe(0);
    const [first, second] = await Promise.all([
      firstValueFrom(client.get()),
      firstValueFrom(client.get()),
    ]);
    expect(first).toBe(second);
    expect(proxy.connections).toBe(1);
    expect(client.connectionState).toBe('Connected');
    expect(await firstValueFrom(client.get())).toBe(first);
    expect(attempts).toEqual([{ outcome: 'success', elapsedMs: expect.any(Number) }]);
  });

  it('close() retires the session, fails waiting refreshes and refuses new work', async () => {
    const executor = await startTestExecutor();
    const registry = new TestRegistry(executor.target);
    const { client } = noiseClient(registry);
    const session = await firstValueFrom(client.get());
    registry.blockNextLookup();
    const refresh = lastValueFrom(client.refreshConnection(), { defaultValue: undefined });
    client.close();
    await expect(refresh).rejects.toThrow('exec-server environment client was closed');
    expect(session.state).toBe('retired');
    expect(client.connectionState).toBe('Disconnected');
    await expect(firstValueFrom(client.get())).rejects.toBeInstanceOf(DisconnectedError);
  });

  it('publishes Disconnected → Connected, then Disconnected → Connected around a recovered drop', async () => {
    const proxy = await droppingProxy(await plainExecutor());
    const client = track(new LazyRemoteExecServerClient(webSocketUrl(proxy.url)));
    const states = client.connectionState$.pipe(take(4), toArray());
    const seen = lastValueFrom(states);
    const session = await firstValueFrom(client.get());
    const process = await firstValueFrom(session.startProcess(CAT_WITH_STDIN));
    const output = firstValueFrom(process.stdout$);
    proxy.drop();
    await nextState(session, 'recovering');
    await nextState(session, 'connected');
    expect(await seen).toEqual(['Disconnected', 'Connected', 'Disconnected', 'Connected']);
    expect(await firstValueFrom(client.get())).toBe(session);
    // The resumed session still drives the same process.
    await firstValueFrom(process.write('after the drop\n'));
    expect(Buffer.from(await output).toString()).toBe('after the drop\n');
    expect(proxy.connections).toBe(2);
  });

  it('after a drop only process/read and process/write are re-issued; other calls fail', async () => {
    const proxy = await droppingProxy(await plainExecutor());
    const client = track(new LazyRemoteExecServerClient(webSocketUrl(proxy.url)));
    const session = await firstValueFrom(client.get());
    const cat = await firstValueFrom(session.startProcess(CAT_WITH_STDIN));
    // Both calls are in flight when the connection drops (in the same tick: no answer can
    // have been processed yet).
    const read = firstValueFrom(cat.read({ afterSeq: 0, waitMs: 3000 }));
    read.catch(() => undefined);
    const metadata = firstValueFrom(session.fs.getMetadata('/tmp')).catch(
      (error: unknown) => error,
    );
    proxy.drop();
    const failed = await metadata;
    expect(failed).toBeInstanceOf(DisconnectedError);
    expect((failed as Error).message).toBe('exec-server transport disconnected');
    await nextState(session, 'connected');
    await firstValueFrom(cat.write('re-issued read sees this\n'));
    const response = await read;
    expect(Buffer.concat(response.chunks.map((chunk) => chunk.chunk)).toString()).toBe(
      're-issued read sees this\n',
    );
  });

  it('fail-fast access never connects or waits: not ready, then live, then recovering', async () => {
    const proxy = await droppingProxy(await plainExecutor());
    const client = track(new LazyRemoteExecServerClient(webSocketUrl(proxy.url)));
    await expect(firstValueFrom(client.getFailFast())).rejects.toThrow(
      'exec-server environment is not ready',
    );
    expect(proxy.connections).toBe(0);
    const session = await firstValueFrom(client.get());
    expect(await firstValueFrom(client.getFailFast())).toBe(session);
    expect(client.readinessResult).toEqual({ ready: true });
    // Recovery needs a new socket, so right after the loss the session is still recovering.
    proxy.drop();
    await nextState(session, 'recovering');
    await expect(firstValueFrom(client.getFailFast())).rejects.toThrow(
      'exec-server environment is recovering',
    );
    await nextState(session, 'connected');
  });

  it('a plain WebSocket environment cannot be refreshed', async () => {
    const client = track(new LazyRemoteExecServerClient(webSocketUrl(await plainExecutor())));
    const refresh = lastValueFrom(client.refreshConnection(), { defaultValue: undefined });
    await expect(refresh).rejects.toBeInstanceOf(ProtocolError);
    await expect(refresh).rejects.toThrow('connection refresh requires a Noise registry');
  });
});

describe('LazyRemoteExecServerClient.fromConnected', () => {
  /** A session the caller connected itself (with recovery, as an environment's would be). */
  async function connectedClient(url: string): Promise<ExecServerClient> {
    const transport = await firstValueFrom(connectWebSocket(url));
    const client = await firstValueFrom(
      ExecServerClient.connect(transport, { clientName: 'from-connected-spec', recovery: true }),
    );
    cleanups.push(() => client.retire());
    return client;
  }

  it('is Connected and ready at once, hands out that client and runs calls on it', async () => {
    const proxy = await droppingProxy(await plainExecutor());
    const session = await connectedClient(proxy.url);
    const client = track(LazyRemoteExecServerClient.fromConnected(session));
    const attempts: ConnectionAttemptReport[] = [];
    client.connectionAttempts$.subscribe((report) => attempts.push(report));
    expect(client.connectionState).toBe('Connected');
    expect(client.startupFinished).toBe(true);
    expect(client.readinessResult).toEqual({ ready: true });
    expect(client.transportParams).toBeUndefined();
    expect(await firstValueFrom(client.get())).toBe(session);
    expect(await firstValueFrom(client.getFailFast())).toBe(session);
    await firstValueFrom(client.waitUntilReady(), { defaultValue: undefined });
    const info = await firstValueFrom((await firstValueFrom(client.get())).environmentStatus());
    expect(info).toBeDefined();
    expect(proxy.connections).toBe(1);
    expect(attempts).toEqual([]);
    client.close();
    expect(session.state).toBe('retired');
  });

  it('cannot recover, reconnect or refresh: a lost transport fails the session for good', async () => {
    const proxy = await droppingProxy(await plainExecutor());
    const session = await connectedClient(proxy.url);
    const client = track(LazyRemoteExecServerClient.fromConnected(session));
    const refresh = lastValueFrom(client.refreshConnection(), { defaultValue: undefined });
    await expect(refresh).rejects.toThrow('connection refresh requires a Noise registry');
    proxy.drop();
    await nextState(session, 'failed');
    expect(session.failure?.message).toContain('cannot be reconnected');
    expect(client.connectionState).toBe('Disconnected');
    const error = await firstValueFrom(client.get()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionAttemptError);
    expect((error as Error).message).toContain('connected by the caller (fromConnected)');
    // Nothing dialled the executor again.
    expect(proxy.connections).toBe(1);
  });
});

describe('LazyRemoteExecServerClient over Noise', () => {
  it('remembers a terminal startup failure: every caller gets the same error', async () => {
    const executor = await startTestExecutor();
    const registry = new TestRegistry(executor.target);
    const { client } = noiseClient(registry);
    const attempts: ConnectionAttemptReport[] = [];
    client.connectionAttempts$.subscribe((report) => attempts.push(report));
    registry.blockNextLookup().fail();
    const first = await firstValueFrom(client.get()).catch((error: unknown) => error);
    const second = await firstValueFrom(client.get()).catch((error: unknown) => error);
    expect(first).toBeInstanceOf(ConnectionAttemptError);
    expect(second).toBe(first);
    expect(client.readinessResult).toEqual({ ready: false, error: first });
    expect(registry.lookups).toBe(1);
    expect(attempts.map((report) => report.outcome)).toEqual(['failure']);
  });

  it('a retryable startup failure does not burn the environment: the next get() retries', async () => {
    const executor = await startTestExecutor();
    const refused = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => refused.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => refused.close(() => resolve())));
    const registry = new TestRegistry({
      ...executor.target,
      url: `ws://127.0.0.1:${(refused.address() as AddressInfo).port}`,
    });
    const { client } = noiseClient(registry);
    const failure = await firstValueFrom(client.get()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConnectionAttemptError);
    expect((failure as ConnectionAttemptError).cause).not.toBeInstanceOf(ProtocolError);
    registry.target = executor.target;
    const session = await firstValueFrom(client.get());
    expect(await firstValueFrom(session.environmentStatus())).toBe('ready');
    expect(client.connectionState).toBe('Connected');
  });

  it('recovery resumes the same session on a renewed registration of the same executor key', async () => {
    const original = await startTestExecutor();
    const registry = new TestRegistry(original.target);
    const { client, harness } = noiseClient(registry);
    const session = await firstValueFrom(client.get());
    const process = await firstValueFrom(session.startProcess(CAT_WITH_STDIN));
    // The same executor (sessions and key) re-registered under another registration id.
    const renewed = await startDirectNoiseExecServer({
      listen: 'ws://127.0.0.1:0',
      executor: original.server.executor,
      identity: original.target.identity,
      registrationId: 'renewed-registration',
    });
    cleanups.push(() => renewed.close());
    registry.target = {
      url: renewed.url,
      identity: renewed.identity,
      registration: 'renewed-registration',
    };
    const output = firstValueFrom(process.stdout$);
    harness.dropLatest();
    await nextState(session, 'recovering');
    await nextState(session, 'connected');
    expect(client.executorRegistrationId).toBe('renewed-registration');
    expect(await firstValueFrom(client.get())).toBe(session);
    await firstValueFrom(process.write('still running\n'));
    expect(Buffer.from(await output).toString()).toBe('still running\n');
  });

  it('recovery fails for good when the registry names another executor key', async () => {
    const original = await startTestExecutor();
    const impostor = await startTestExecutor();
    const registry = new TestRegistry(original.target);
    const { client, harness } = noiseClient(registry);
    const session = await firstValueFrom(client.get());
    registry.target = impostor.target;
    harness.dropLatest();
    await nextState(session, 'failed');
    expect(session.failure?.message).toMatch(
      /failed to resume exec-server session: exec-server protocol error: executor key changed during session recovery$/,
    );
    expect(client.connectionState).toBe('Disconnected');
    // The next get() builds a new session through the registry.
    const replacement = await firstValueFrom(client.get());
    expect(replacement).not.toBe(session);
    expect(replacement.sessionId).not.toBe(session.sessionId);
  });

  it('a superseded handshake that completes later is never installed', async () => {
    const validator = new ControlledValidator(true);
    const stalled = await startTestExecutor(validator);
    const other = await startTestExecutor();
    const registry = new TestRegistry(stalled.target);
    const { client, harness } = noiseClient(registry);
    const attempts: ConnectionAttemptReport[] = [];
    client.connectionAttempts$.subscribe((report) => attempts.push(report));
    const initial = firstValueFrom(client.get()).catch((error: unknown) => error);
    await validator.started;
    registry.target = other.target;
    await lastValueFrom(client.refreshConnection(), { defaultValue: undefined });
    const installed = await firstValueFrom(client.get());
    const superseded = await initial;
    expect(superseded).toBeInstanceOf(ConnectionAttemptError);
    expect(((superseded as ConnectionAttemptError).cause as Error).message).toBe(
      'connection attempt was superseded',
    );
    validator.release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await firstValueFrom(client.get())).toBe(installed);
    expect(harness.transports).toHaveLength(1);
    // Only the initial attempt is reported; the refresh's own attempt is not.
    expect(attempts.map((report) => report.outcome)).toEqual(['cancelled']);
  });
});

describe('Environment and EnvironmentManager', () => {
  it('a provisioned environment fails while provisioning failed and connects once it is ready', async () => {
    const executor = await startTestExecutor();
    const registry = new TestRegistry(executor.target);
    const harness = new RecordingHarness();
    const manager = EnvironmentManager.fromSnapshot(
      { environments: [], default: 'disabled', includeLocal: false },
      { connectHarness: harness.connect },
    );
    cleanups.push(() => manager.close());
    const environment = manager.materializePendingNoiseEnvironment('environment', registry);
    expect(manager.materializePendingNoiseEnvironment('environment', registry)).toBe(environment);
    expect(await firstValueFrom(environment.status())).toEqual({ status: 'pending' });
    manager.reportEnvironmentProvisioningStatus('environment', { error: 'no capacity' }, registry);
    // A later failure does not replace the first.
    manager.reportEnvironmentProvisioningStatus('environment', { error: 'other' }, registry);
    expect(await firstValueFrom(environment.status())).toEqual({
      status: 'disconnected',
      error: 'environment unavailable: no capacity',
    });
    const failed = await firstValueFrom(environment.info()).catch((error: unknown) => error);
    expect((failed as ConnectionAttemptError).cause).toBeInstanceOf(ProvisioningFailedError);
    expect(registry.lookups).toBe(0);

    manager.reportEnvironmentProvisioningStatus(
      'environment',
      { ready: { selectedCapabilityRoots: [{ id: 'root', path: '/tmp' }] } },
      registry,
    );
    const info = await firstValueFrom(environment.info());
    expect(typeof info.shell).toBe('object');
    expect(await firstValueFrom(environment.status())).toEqual({ status: 'ready' });
    expect(environment.lastReadyInfo?.selectedCapabilityRoots).toHaveLength(1);
    // A late failure cannot replace Ready, and is reported to the caller.
    expect(() =>
      manager.reportEnvironmentProvisioningStatus('environment', { error: 'late' }, registry),
    ).toThrow(
      'environment `environment` is already ready, but a later provisioning report failed: late',
    );
    expect(await firstValueFrom(environment.status())).toEqual({ status: 'ready' });
    const handle = await firstValueFrom(
      environment
        .getExecBackend()
        .start({ argv: ['true'], cwd: '/tmp', env: { PATH: '/usr/bin:/bin' } }),
    );
    expect(await firstValueFrom(handle.exit$)).toBe(0);
  });

  it('configured environments connect in the background; ids are validated', async () => {
    const url = await plainExecutor();
    const manager = EnvironmentManager.fromSnapshot({
      environments: [{ id: 'remote', transport: webSocketUrl(url) }],
      default: { id: 'remote' },
      includeLocal: false,
    });
    cleanups.push(() => manager.close());
    const environment = manager.getDefaultEnvironment() as Environment;
    expect(environment).toBe(manager.getEnvironment('remote'));
    await firstValueFrom(environment.connectionState$.pipe(filter((s) => s === 'Connected')));
    expect(environment.startupFinished).toBe(true);
    expect(() =>
      manager.materializePendingNoiseEnvironment('remote', new TestRegistry({} as never)),
    ).toThrow(ProvisioningModeConflictError);
    expect(() =>
      EnvironmentManager.fromSnapshot({
        environments: [{ id: 'local', transport: webSocketUrl(url) }],
        default: 'disabled',
        includeLocal: false,
      }),
    ).toThrow('reserved');
    expect(() =>
      EnvironmentManager.fromSnapshot({
        environments: [],
        default: { id: 'x' },
        includeLocal: false,
      }),
    ).toThrow('default environment `x` is not configured');
  });
});
