/**
 * `execrx serve` flags shared with `codex exec-server`: --concurrent-requests, --name,
 * --exit-on-stdin-close (behaviour probed on the binary, see spec/fixtures/FINDINGS.md).
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { RawClient, startParams } from '../server/rawClient.js';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';

beforeAll(assertBuilt);
afterEach(killRunningClis);

describe('execrx serve, flags of codex exec-server', () => {
  it("--concurrent-requests refuses 0 and non-numbers with the binary's wording", async () => {
    const zero = await runCli(['serve', '--concurrent-requests', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain(
      "invalid value '0' for '--concurrent-requests <COUNT>': number would be zero for non-zero type",
    );
    const text = await runCli(['serve', '--concurrent-requests', 'abc']);
    expect(text.code).toBe(2);
    expect(text.stderr).toContain('invalid digit found in string');
  });

  it('--concurrent-requests 1 makes a waiting process/read hold back the next request', async () => {
    const server = startCli([
      'serve',
      '--no-warm-up',
      '--concurrent-requests',
      '1',
      '--name',
      'box',
    ]);
    const [url] = await server.stdoutLines(1);
    const client = await RawClient.connect(url as string);
    await client.handshake();
    await client.call('process/start', startParams('sleeper', ['/bin/sleep', '5']));
    const started = Date.now();
    const read = client.post('process/read', { processId: 'sleeper', afterSeq: 0, waitMs: 1_000 });
    await client.request('fs/getMetadata', { path: 'file:///tmp' }, 10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    await client.response(read);
    await client.close();
    server.child.kill('SIGTERM');
    expect((await server.result).code).toBe(0);
  });

  it('--exit-on-stdin-close needs --remote, and then stops serving when stdin ends', async () => {
    const alone = await runCli(['serve', '--exit-on-stdin-close']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--exit-on-stdin-close needs --remote and --environment-id');

    const token = { CODEX_API_KEY: 'parity-token' };
    const rendezvous = startCli(['rendezvous'], {
      env: {
        EXECRX_RENDEZVOUS_EXECUTOR_TOKEN: token.CODEX_API_KEY,
        EXECRX_RENDEZVOUS_HARNESS_TOKEN: 'parity-harness-token',
      },
      timeoutMs: 30_000,
    });
    const [registry] = await rendezvous.stdoutLines(1);
    const started = Date.now();
    const executor = await runCli(
      [
        'serve',
        '--no-warm-up',
        '--remote',
        registry as string,
        '--environment-id',
        'parity',
        '--exit-on-stdin-close',
      ],
      { env: token, input: '', timeoutMs: 20_000 },
    );
    expect(executor.code).toBe(0);
    expect(executor.signal).toBeNull();
    expect(Date.now() - started).toBeLessThan(15_000);
    rendezvous.child.kill('SIGINT');
    await rendezvous.result;
  });
});
