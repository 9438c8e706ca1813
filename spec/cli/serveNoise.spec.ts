/** `execrx serve --noise`: a client builds a bundle from the two printed lines and runs a command. */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { firstValueFrom, lastValueFrom, switchMap, toArray } from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import type { NoiseRendezvousConnectBundle } from '../../src/registry/index.js';
import { connectNoiseHarness } from '../../src/transport/noiseHarnessTransport.js';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';

beforeAll(assertBuilt);
afterEach(killRunningClis);

describe('execrx serve --noise', () => {
  let client: ExecServerClient | undefined;
  afterEach(() => {
    client?.close();
    client = undefined;
  });

  it('prints its URL and key, serves an encrypted client, and stops on SIGTERM', async () => {
    const server = startCli(['serve', '--no-warm-up', '--noise', '--environment-id', 'cli-noise']);
    const [url, announcement] = await server.stdoutLines(2);
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const bundle: NoiseRendezvousConnectBundle = {
      ...(JSON.parse(announcement as string) as Omit<
        NoiseRendezvousConnectBundle,
        'websocketUrl' | 'harnessKeyAuthorization'
      >),
      websocketUrl: url as string,
      harnessKeyAuthorization: 'any',
    };
    expect(bundle.environmentId).toBe('cli-noise');

    client = await firstValueFrom(
      connectNoiseHarness(bundle, NoiseChannelIdentity.generate()).pipe(
        switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'spec' })),
      ),
    );
    const handle = await firstValueFrom(
      client.startProcess({
        argv: ['sh', '-c', 'echo hi; exit 5'],
        cwd: '/',
        env: { PATH: process.env.PATH ?? '' },
      }),
    );
    const events = await lastValueFrom(handle.events$.pipe(toArray()));
    const output = events
      .flatMap((event) => (event.type === 'output' ? [Buffer.from(event.chunk).toString()] : []))
      .join('');
    expect(output).toBe('hi\n');
    expect(events).toContainEqual(expect.objectContaining({ type: 'exited', exitCode: 5 }));

    // A harness expecting another executor key is refused (the handshake cannot authenticate).
    const impostor = { ...bundle, executorPublicKey: NoiseChannelIdentity.generate().toJSON() };
    await expect(
      firstValueFrom(connectNoiseHarness(impostor, NoiseChannelIdentity.generate())),
    ).rejects.toThrow();

    server.child.kill('SIGTERM');
    expect(await server.result).toMatchObject({ code: 0, stderr: '' });
  });

  it('refuses --listen stdio as a usage error', async () => {
    const result = await runCli(['serve', '--noise', '--listen', 'stdio']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(
      'execrx: --noise listens on ws://IP:PORT only, got `stdio` (see `execrx serve --help`)\n',
    );
  });
});
