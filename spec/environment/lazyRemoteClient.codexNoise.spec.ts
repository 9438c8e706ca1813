/**
 * The production Noise path end to end: our rendezvous (registry + relay), the real
 * `codex exec-server --remote` 0.169.0 registered with it, and a LazyRemoteExecServerClient
 * using the HTTP registry provider and the Noise harness. Covers connect, recovery after the
 * harness stream is lost (a fresh `/connect` lookup, same executor key), and a refresh that
 * keeps the session and passes a live status probe.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { filter, firstValueFrom, lastValueFrom, scan, timeout } from 'rxjs';
import { LazyRemoteExecServerClient, noiseRendezvous } from '../../src/environment/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { EnvironmentRegistryClient, RegistryConnectProvider } from '../../src/registry/index.js';
import type { Rendezvous } from '../../src/rendezvous/index.js';
import {
  startCodexRendezvousSetup,
  type CodexRendezvousSetup,
  type RunningCodexRemote,
} from '../support/codexRemote.js';
import { RecordingHarness } from './support/testExecutors.js';

const TOKEN = 'sk-test-execrx-lifecycle';

let setup: CodexRendezvousSetup;
let rendezvous: Rendezvous;
let executor: RunningCodexRemote;
let workDir: string;
const clients: LazyRemoteExecServerClient[] = [];

beforeAll(async () => {
  setup = await startCodexRendezvousSetup({ executorToken: TOKEN }, 'execrx-lifecycle-');
  ({ rendezvous, executor, workDir } = setup);
}, 30_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await setup?.stop();
});

const within = <T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> =>
  Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms),
    ),
  ]);

describe('LazyRemoteExecServerClient → our rendezvous → codex exec-server --remote 0.169.0', () => {
  it('connects, recovers a lost harness stream on the same session, and refresh keeps it', async () => {
    const registry = new EnvironmentRegistryClient({
      baseUrl: rendezvous.url,
      bearerToken: rendezvous.harnessToken,
    });
    const harness = new RecordingHarness();
    const client = new LazyRemoteExecServerClient(
      noiseRendezvous(
        new RegistryConnectProvider(registry, executor.environmentId),
        NoiseChannelIdentity.generate(),
        { connectHarness: harness.connect },
      ),
    );
    clients.push(client);
    const session = await within(firstValueFrom(client.get()), 'connect');
    expect(client.connectionState).toBe('Connected');
    expect(client.executorRegistrationId).toBe(executor.registrationId);
    const cat = await within(
      firstValueFrom(
        session.startProcess({
          argv: ['cat'],
          cwd: workDir,
          pipeStdin: true,
          env: { PATH: '/usr/bin:/bin' },
        }),
      ),
      'process start',
    );
    const expected = 'before\nafter\n';
    const echoed = firstValueFrom(
      cat.stdout$.pipe(
        scan((text, chunk) => text + Buffer.from(chunk).toString(), ''),
        filter((text) => text.length >= expected.length),
      ),
    );
    await within(firstValueFrom(cat.write('before\n')), 'first write');

    harness.dropLatest();
    await within(
      firstValueFrom(session.state$.pipe(filter((state) => state === 'connected'))),
      'recovery',
    );
    expect(harness.transports).toHaveLength(2);
    await within(firstValueFrom(cat.write('after\n')), 'write after recovery');
    expect(await within(echoed, 'echo')).toBe(expected);

    // Same executor key: refresh keeps the session and probes it live.
    await within(
      lastValueFrom(client.refreshConnection().pipe(timeout(10_000)), { defaultValue: undefined }),
      'refresh',
    );
    expect(await firstValueFrom(client.get())).toBe(session);
    expect(session.state).toBe('connected');
    await within(firstValueFrom(cat.terminate()), 'terminate');
  }, 40_000);
});
