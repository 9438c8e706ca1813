/** `execrx run` and signals: Ctrl-C forwarding and exit statuses after death by a signal. */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';

beforeAll(assertBuilt);
afterEach(killRunningClis);

describe('execrx run: signals', () => {
  it('reports death by a signal as 128 + the signal number', async () => {
    const killed = await runCli(['run', '--', 'sh', '-c', 'kill -KILL $$']);
    expect(killed.code).toBe(128 + 9);
    const terminated = await runCli(['run', '--', 'sh', '-c', 'kill -TERM $$']);
    expect(terminated.code).toBe(128 + 15);
  });

  it('interrupts the remote process on Ctrl-C and reports its own exit code', async () => {
    const cli = startCli([
      'run',
      '--',
      'sh',
      '-c',
      'trap "echo trapped; exit 7" INT; echo ready; sleep 10',
    ]);
    await cli.waitForStdout('ready\n');
    cli.child.kill('SIGINT');
    expect(await cli.result).toMatchObject({ code: 7, stdout: 'ready\ntrapped\n' });
  });

  it('kills the remote process on a second Ctrl-C', async () => {
    const cli = startCli([
      'run',
      '--',
      'sh',
      '-c',
      'trap "echo ignored" INT; echo ready; while :; do sleep 0.05; done',
    ]);
    await cli.waitForStdout('ready\n');
    cli.child.kill('SIGINT');
    await cli.waitForStdout('ignored\n');
    cli.child.kill('SIGINT');
    expect((await cli.result).code).toBe(137);
  });
});
