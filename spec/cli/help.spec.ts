/** Help texts and usage errors: `main()` in-process with captured streams, plus the real bin. */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { assertBuilt, runCli } from './support/runCli.js';

async function runMain(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString()));
  const code = await main(argv, { stdin, stdout, stderr });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('execrx help', () => {
  it('lists every command in the top-level help', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const result = await runMain(argv);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: execrx <command>/);
      for (const command of COMMANDS) expect(result.stdout).toContain(`  ${command.name} `);
    }
  });

  it('prints the help and exits 2 when no command is given', async () => {
    const result = await runMain([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^Usage: execrx <command>/);
  });

  it.each(COMMANDS.map((command) => command.name))('has `execrx %s --help`', async (name) => {
    const viaFlag = await runMain([name, '--help']);
    expect(viaFlag.code).toBe(0);
    expect(viaFlag.stdout).toMatch(new RegExp(`^Usage: execrx ${name} `));
    expect(viaFlag.stdout).toContain('--help');
    expect(await runMain(['help', name])).toEqual(viaFlag);
  });

  it('documents every run option', async () => {
    const { stdout } = await runMain(['run', '--help']);
    for (const option of [
      '--url',
      '--registry',
      '--environment-id',
      '--token-env',
      '--token-file',
      '--tty',
      '--cwd',
      '--env',
      '--inherit-env',
      '--no-stdin',
    ]) {
      expect(stdout).toContain(option);
    }
  });

  it('documents every serve and rendezvous option', async () => {
    const serve = (await runMain(['serve', '--help'])).stdout;
    for (const option of [
      '--listen',
      '--noise',
      '--remote',
      '--environment-id',
      '--api-key-env',
      '--ws-auth',
      '--ws-token-file',
      '--ws-token-sha256',
      '--ws-shared-secret-file',
      '--ws-issuer',
      '--ws-audience',
      '--ws-max-clock-skew-seconds',
      '--insecure-no-auth',
    ]) {
      expect(serve).toContain(option);
    }
    expect(serve).not.toMatch(/serve --listen ws:\/\/0\.0\.0\.0:\d+\n/);
    const rendezvous = (await runMain(['rendezvous', '--help'])).stdout;
    for (const option of ['--listen', '--executor-token', '--harness-token', '--public-url']) {
      expect(rendezvous).toContain(option);
    }
  });
});

describe('execrx usage errors (exit code 2, one line with a hint)', () => {
  it.each([
    [['frobnicate'], 'unknown command `frobnicate` (see `execrx --help`)'],
    [['--frob'], 'unknown option `--frob` (see `execrx --help`)'],
    [['run'], 'missing the command to run (see `execrx run --help`)'],
    [['run', '--bogus', '--', 'true'], 'unknown option `--bogus` (see `execrx run --help`)'],
    [['run', '--cwd'], 'option `--cwd` needs a value (see `execrx run --help`)'],
    [['run', '--tty=yes', 'true'], 'option `--tty` takes no value (see `execrx run --help`)'],
    [
      ['run', '--env', 'NOEQUALS', 'true'],
      '--env expects NAME=VALUE, got `NOEQUALS` (see `execrx run --help`)',
    ],
    [
      ['run', '--inherit-env', 'some', 'true'],
      '--inherit-env expects all, core or none, got `some` (see `execrx run --help`)',
    ],
    [
      ['run', '--url', 'http://x', 'true'],
      '--url expects ws://HOST:PORT or wss://…, got `http://x` (see `execrx run --help`)',
    ],
    [['serve', 'extra'], 'unexpected argument `extra` (see `execrx serve --help`)'],
    [
      ['serve', '--listen', 'ws://0.0.0.0:0'],
      'refusing to serve ws://0.0.0.0:0 without authentication: anyone who reaches it runs commands as this user. Pass --ws-auth capability-token --ws-token-file PATH (or signed-bearer-token), or --insecure-no-auth on a network you trust (see `execrx serve --help`)',
    ],
    [
      ['serve', '--noise', '--listen', 'ws://[::]:0'],
      'refusing to serve ws://[::]:0 without authentication: anyone who reaches it runs commands as this user. Pass --ws-auth capability-token --ws-token-file PATH (or signed-bearer-token), or --insecure-no-auth on a network you trust (see `execrx serve --help`)',
    ],
    [
      ['serve', '--ws-auth', 'capability-token', '--insecure-no-auth'],
      '--insecure-no-auth contradicts --ws-auth (see `execrx serve --help`)',
    ],
    [
      ['serve', '--ws-auth', 'bogus'],
      "invalid value 'bogus' for '--ws-auth <MODE>' [possible values: capability-token, signed-bearer-token] (see `execrx serve --help`)",
    ],
    [
      ['serve', '--noise', '--ws-auth', 'capability-token'],
      '--ws-auth applies to plain ws:// serving, not --noise (see `execrx serve --help`)',
    ],
    [
      ['run', '--token-env', 'T', 'true'],
      '--token-env and --token-file need --url or --registry (see `execrx run --help`)',
    ],
    [
      ['run', '--url', 'ws://x', '--token-env', 'T', '--token-file', 'f', 'true'],
      '--token-file and --token-env exclude each other (see `execrx run --help`)',
    ],
    [
      ['run', '--url', 'ws://x', '--token-env', 'EXECRX_UNSET_VAR', 'true'],
      '--token-env names EXECRX_UNSET_VAR, which is empty or unset (see `execrx run --help`)',
    ],
    [
      ['run', '--url', 'ws://x', '--registry', 'http://x', 'true'],
      '--url and --registry exclude each other (see `execrx run --help`)',
    ],
    [
      ['run', '--registry', 'http://x', 'true'],
      '--registry needs --environment-id (see `execrx run --help`)',
    ],
    [
      ['run', '--registry', 'ws://x', '--environment-id', 'e', 'true'],
      '--registry expects http(s)://HOST[:PORT], got `ws://x` (see `execrx run --help`)',
    ],
    [
      ['run', '--environment-id', 'e', 'true'],
      '--environment-id needs --registry (see `execrx run --help`)',
    ],
    [
      [
        'run',
        '--registry',
        'http://x',
        '--environment-id',
        'e',
        '--token-env',
        'EXECRX_UNSET_VAR',
        'true',
      ],
      '--registry needs a bearer token in the EXECRX_UNSET_VAR variable (see `execrx run --help`)',
    ],
    [
      ['serve', '--remote', 'http://x'],
      '--remote needs --environment-id (see `execrx serve --help`)',
    ],
    [
      ['serve', '--remote', 'http://x', '--noise', '--environment-id', 'e'],
      '--remote excludes --listen and --noise (see `execrx serve --help`)',
    ],
    [
      ['serve', '--remote', 'ws://x', '--environment-id', 'e'],
      '--remote expects http(s)://HOST[:PORT], got `ws://x` (see `execrx serve --help`)',
    ],
    [
      [
        'serve',
        '--remote',
        'http://x',
        '--environment-id',
        'e',
        '--api-key-env',
        'EXECRX_UNSET_VAR',
      ],
      '--remote needs the registry API key in the EXECRX_UNSET_VAR variable (see `execrx serve --help`)',
    ],
    [['serve', '--api-key-env', 'K'], '--api-key-env needs --remote (see `execrx serve --help`)'],
    [
      ['serve', '--environment-id', 'e'],
      '--environment-id needs --remote or --noise (see `execrx serve --help`)',
    ],
    [
      ['rendezvous', '--listen', 'ws://127.0.0.1:0'],
      '--listen expects http://IP:PORT, got `ws://127.0.0.1:0` (see `execrx rendezvous --help`)',
    ],
    [['rendezvous', 'extra'], 'unexpected argument `extra` (see `execrx rendezvous --help`)'],
  ])('%j', async (argv, message) => {
    const result = await runMain(argv);
    expect(result).toEqual({ code: 2, stdout: '', stderr: `execrx: ${message}\n` });
  });
});

describe('bin/execrx.js', () => {
  beforeAll(assertBuilt);

  it('runs the built CLI and exits with its code', async () => {
    const help = await runCli(['run', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: execrx run /);
    const usage = await runCli(['run']);
    expect(usage).toMatchObject({ code: 2, stdout: '' });
    expect(usage.stderr).toContain('missing the command to run');
  });
});
