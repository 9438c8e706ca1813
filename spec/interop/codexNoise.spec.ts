/**
 * Interop: our harness (registry client `/connect` + `connectNoiseHarness`) reaches the real
 * `codex exec-server --remote` 0.169.0 through our rendezvous, and `ExecServerClient` works
 * over the encrypted path. Negative cases: a refused authorization and a wrong executor key
 * both end in typed errors before any application data crosses the relay.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Observable, filter, firstValueFrom, lastValueFrom, timeout, toArray } from 'rxjs';
import type { ExecServerClient } from '../../src/client/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import type { Rendezvous, RendezvousEvent } from '../../src/rendezvous/index.js';
import { connectNoiseHarness } from '../../src/transport/noiseHarnessTransport.js';
import { NoiseRelayStreamResetError } from '../../src/transport/noiseHarnessErrors.js';
import {
  startCodexRendezvousSetup,
  type CodexRendezvousSetup,
  type RunningCodexRemote,
} from '../support/codexRemote.js';
import {
  framesToExecutor as framesOn,
  type RendezvousHarness,
  within,
} from '../support/rendezvousHarness.js';

const TOKEN = 'sk-test-execrx-rendezvous';
const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
const all = <T>(source: Observable<T>): Promise<T[]> =>
  lastValueFrom(source.pipe(toArray(), timeout(10_000)));

let setup: CodexRendezvousSetup;
let rendezvous: Rendezvous;
let executor: RunningCodexRemote;
let harness: RendezvousHarness;
let workDir: string;
let events: RendezvousEvent[];

beforeAll(async () => {
  setup = await startCodexRendezvousSetup(
    { listen: 'http://127.0.0.1:0', executorToken: TOKEN },
    'execrx-interop-',
  );
  ({ rendezvous, executor, harness, workDir, events } = setup);
}, 30_000);

afterAll(async () => {
  await setup?.stop();
});

const framesToExecutor = (streamId: string): string[] => framesOn(events, streamId);
const openClient = (): Promise<ExecServerClient> =>
  setup.openClient({ clientName: 'execrx-interop' }, 15_000);

describe('our harness ↔ rendezvous ↔ codex exec-server --remote 0.169.0', () => {
  it('registered with the rendezvous and validated our harness key', async () => {
    const status = await rendezvous.environment(executor.environmentId);
    expect(status?.attachedRegistrationId).toBe(executor.registrationId);
    const client = await openClient();
    expect(client.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const validations = events.filter((event) => event.type === 'validated');
    expect(validations.at(-1)).toMatchObject({
      valid: true,
      environmentId: executor.environmentId,
    });
    // The binary names the stream it validates (x-codex-noise-stream-id).
    const streamId = validations.at(-1)?.type === 'validated' ? validations.at(-1)!.streamId : '';
    expect(framesToExecutor(streamId!)).toEqual(
      expect.arrayContaining(['resume', 'handshake', 'data']),
    );
  });

  it('initialize + environment/info over the encrypted path', async () => {
    const client = await openClient();
    const info = await within(client.environmentInfo());
    expect(info.executorVersion).toBe('0.169.0');
    expect(info.cwd).toBe(pathToFileURL(workDir).href);
  });

  it('runs a process with output and exit code', async () => {
    const client = await openClient();
    const handle = await within(
      client.startProcess({
        argv: ['sh', '-c', 'printf out; printf err >&2; exit 3'],
        cwd: workDir,
        env: PATH_ENV,
      }),
    );
    const [stdout, stderr, exitCode] = await Promise.all([
      all(handle.stdout$),
      all(handle.stderr$),
      within(handle.exit$),
    ]);
    expect(Buffer.concat(stdout).toString()).toBe('out');
    expect(Buffer.concat(stderr).toString()).toBe('err');
    expect(exitCode).toBe(3);
  });

  it('fs round trip, including a file larger than one Noise record', async () => {
    const client = await openClient();
    const file = join(workDir, 'round-trip.bin');
    const content = Buffer.alloc(200_000, 0).map((_, i) => (i * 7) % 251);
    await within(client.fs.writeFile(file, content));
    const back = Buffer.from(await within(client.fs.readFile(file)));
    expect(back.equals(content)).toBe(true);
  });

  it('an authorization the registry refuses ends in a stream reset, no data crosses', async () => {
    const bundle = await harness.bundle();
    const expired = await rendezvous.issueAuthorization(
      executor.environmentId,
      harness.identity.toJSON(),
      Date.now() - 1,
    );
    for (const authorization of [expired, `${bundle.harnessKeyAuthorization}x`]) {
      const streamId = crypto.randomUUID();
      const refused = firstValueFrom(
        rendezvous.events.pipe(
          filter((event) => event.type === 'validated' && event.streamId === streamId),
          timeout(10_000),
        ),
      );
      const error = await within(
        connectNoiseHarness(
          { ...(await harness.bundle()), harnessKeyAuthorization: authorization },
          harness.identity,
          { streamId },
        ),
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NoiseRelayStreamResetError);
      expect(await refused).toMatchObject({ valid: false });
      expect(framesToExecutor(streamId)).toEqual(['resume', 'handshake']);
    }
  });

  it('a tampered executor key ends in a stream reset without a /validate call', async () => {
    const bundle = await harness.bundle();
    const other = NoiseChannelIdentity.generate().toJSON();
    const streamId = crypto.randomUUID();
    const error = await within(
      connectNoiseHarness(
        {
          ...bundle,
          executorPublicKey: {
            ...bundle.executorPublicKey,
            x25519_public_key: other.x25519_public_key,
          },
        },
        harness.identity,
        { streamId },
      ),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoiseRelayStreamResetError);
    expect(framesToExecutor(streamId)).toEqual(['resume', 'handshake']);
    expect(events.some((event) => event.type === 'validated' && event.streamId === streamId)).toBe(
      false,
    );
  });
});
