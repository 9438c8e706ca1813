import { describe, expect, it } from '@jest/globals';
import { firstValueFrom, timeout } from 'rxjs';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { EnvironmentRegistryClient } from '../../src/registry/index.js';
import { runRendezvousCommand } from '../../src/rendezvous/index.js';

/** Resolves once `lines` has an entry matching `pattern` (bounded). */
async function lineMatching(lines: string[], pattern: RegExp): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const line = lines.find((entry) => pattern.test(entry));
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no line matching ${pattern} in ${JSON.stringify(lines)}`);
}

describe('execrx rendezvous (runRendezvousCommand)', () => {
  it('prints its URL, serves registrations with the given token, logs, and stops on abort', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const controller = new AbortController();
    const running = runRendezvousCommand({
      listen: 'http://127.0.0.1:0',
      executorToken: 'cli-token',
      harnessToken: 'cli-harness-token',
      writeOut: (line) => out.push(line),
      writeErr: (line) => err.push(line),
      signal: controller.signal,
    });
    const url = await lineMatching(out, /^http:\/\/127\.0\.0\.1:\d+$/);
    const registry = new EnvironmentRegistryClient({ baseUrl: url, bearerToken: 'cli-token' });
    const registration = await firstValueFrom(
      registry.register('cli-env', NoiseChannelIdentity.generate().toJSON()).pipe(timeout(5_000)),
    );
    expect(await lineMatching(err, /cli-env registered/)).toContain(
      registration.executorRegistrationId,
    );
    controller.abort();
    await running;
    await expect(fetch(`${url}/cloud/environment/cli-env/register`)).rejects.toThrow();
  });

  it('generates distinct tokens when none are given and prints them on stderr', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const controller = new AbortController();
    const running = runRendezvousCommand({
      writeOut: (line) => out.push(line),
      writeErr: (line) => err.push(line),
      signal: controller.signal,
    });
    const url = await lineMatching(out, /^http:\/\//);
    const token = (await lineMatching(err, /generated executor token/)).split(': ').at(-1)!;
    const harnessToken = (await lineMatching(err, /generated harness token/)).split(': ').at(-1)!;
    expect(harnessToken).not.toBe(token);
    const registry = new EnvironmentRegistryClient({ baseUrl: url, bearerToken: token });
    await firstValueFrom(
      registry.register('env', NoiseChannelIdentity.generate().toJSON()).pipe(timeout(5_000)),
    );
    controller.abort();
    await running;
  });
});
