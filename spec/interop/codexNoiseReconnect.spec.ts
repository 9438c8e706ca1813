/**
 * Executor reconnects through our rendezvous with the real `codex exec-server --remote`
 * 0.169.0: when its registration is superseded the rendezvous closes its socket and answers
 * its old URL with 404; the binary registers again (same key) and re-attaches. Harness streams
 * of the old socket are reset, and a client with recovery resumes its session on a new stream.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  defer,
  filter,
  lastValueFrom,
  retry,
  scan,
  switchMap,
  throwError,
  timeout,
  timer,
  toArray,
} from 'rxjs';
import { isRetryableResumeError } from '../../src/client/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { EnvironmentRegistryClient } from '../../src/registry/index.js';
import type { Rendezvous, RendezvousEvent } from '../../src/rendezvous/index.js';
import {
  startCodexRendezvousSetup,
  type CodexRendezvousSetup,
  type RunningCodexRemote,
} from '../support/codexRemote.js';
import { within } from '../support/rendezvousHarness.js';

const TOKEN = 'sk-test-execrx-reconnect';

let setup: CodexRendezvousSetup;
let rendezvous: Rendezvous;
let executor: RunningCodexRemote;
let workDir: string;
let events: RendezvousEvent[];

beforeAll(async () => {
  setup = await startCodexRendezvousSetup(
    {
      executorToken: TOKEN,
      // Short enough that a missing Pong would show within the test, long enough for CI jitter.
      keepalive: { pingIntervalMs: 200, pongTimeoutMs: 3_000 },
    },
    'execrx-reconnect-',
  );
  ({ rendezvous, executor, workDir, events } = setup);
}, 30_000);

afterAll(async () => {
  await setup?.stop();
});

describe('codex exec-server --remote 0.169.0 reconnecting through our rendezvous', () => {
  it('re-registers after its registration is superseded, and the session resumes', async () => {
    const harness = setup.harness;
    const client = await setup.openClient({ clientName: 'execrx-interop', recovery: true });
    const sessionId = client.sessionId;
    const handle = await within(
      client.startProcess({
        argv: ['sh', '-c', 'echo one; read x; echo "two:$x"'],
        cwd: workDir,
        env: { PATH: '/usr/bin:/bin' },
        pipeStdin: true,
      }),
    );
    const stdout = lastValueFrom(handle.stdout$.pipe(toArray(), timeout(20_000)));
    await within(
      handle.stdout$.pipe(
        scan((acc, chunk) => acc + Buffer.from(chunk).toString(), ''),
        filter((acc) => acc.includes('one')),
      ),
    );

    // Someone else cannot register the environment (409); the operator deletes the
    // registration: the binary's socket is closed (4000) and its URL goes stale.
    const originalKey = (await rendezvous.environment(executor.environmentId))?.executorPublicKey;
    const usurper = new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: TOKEN });
    const refused = await within(
      usurper.register(executor.environmentId, NoiseChannelIdentity.generate().toJSON()),
    ).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 409 });
    expect(await rendezvous.evict(executor.environmentId)).toBe(true);
    const attached = await within(
      rendezvous.events.pipe(filter((event) => event.type === 'executor-attached')),
      20_000,
    );
    if (attached.type !== 'executor-attached') throw new Error('unreachable');
    expect(attached.registrationId).not.toBe(executor.registrationId);
    // The binary tried its old URL (404) and registered again with its own key.
    const since = events.slice(events.findIndex((event) => event.type === 'executor-detached'));
    expect(since.map((event) => event.type)).toEqual(
      expect.arrayContaining([
        'executor-detached',
        'upgrade-refused',
        'registered',
        'executor-attached',
      ]),
    );
    expect(since).toContainEqual(expect.objectContaining({ type: 'upgrade-refused', status: 404 }));
    expect((await rendezvous.environment(executor.environmentId))?.attachedRegistrationId).toBe(
      attached.registrationId,
    );
    // Same process identity: the re-registration carries the key it registered first.
    expect((await rendezvous.environment(executor.environmentId))?.executorPublicKey).toEqual(
      originalKey,
    );
    // The stream of the old socket was reset to our harness; recover on a fresh bundle.
    await within(client.state$.pipe(filter((state) => state === 'recovering')));
    await lastValueFrom(
      defer(() => harness.connect()).pipe(
        switchMap((next) => client.resume(next)),
        retry({
          count: 50,
          delay: (error: unknown) =>
            isRetryableResumeError(error) ? timer(100) : throwError(() => error),
        }),
        timeout(15_000),
      ),
      { defaultValue: undefined },
    );
    expect(client.sessionId).toBe(sessionId);
    await within(handle.write('after-reconnect\n'));
    expect(Buffer.concat(await stdout).toString()).toBe('one\ntwo:after-reconnect\n');
    // Pings were answered all along: only the supersede ended a socket.
    expect(
      events
        .filter((event) => event.type === 'executor-detached')
        .map((event) => event.type === 'executor-detached' && event.reason),
    ).toEqual(['superseded']);
  }, 40_000);
});
