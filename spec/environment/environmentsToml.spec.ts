/**
 * environments.toml parsing and validation, with the Rust client's error texts
 * (upstream `environment_toml.rs` tests).
 */
import { describe, expect, it } from '@jest/globals';
import { parseEnvironmentsToml } from '../../src/environment/environmentsToml.js';

const PATH = '/home/u/.codex/environments.toml';
const parse = (text: string, configDir?: string) => parseEnvironmentsToml(text, PATH, configDir);
const entry = (fields: string) => `[[environments]]\n${fields}\n`;

describe('parseEnvironmentsToml', () => {
  it('reads ws and stdio entries, the default and include_local', () => {
    const config = parse(`
default = "ssh-dev"
include_local = false

[[environments]]
id = "devbox"
url = " ws://127.0.0.1:4512 "
connect_timeout_sec = 12.0
initialize_timeout_sec = 34

[[environments]]
id = "ssh-dev"
program = " ssh "
args = ["dev", "codex exec-server --listen stdio"]
cwd = "/tmp"
[environments.env]
CODEX_LOG = "debug"
`);
    expect(config).toEqual({
      includeLocal: false,
      default: { id: 'ssh-dev' },
      environments: [
        {
          id: 'devbox',
          transport: {
            kind: 'websocket',
            url: 'ws://127.0.0.1:4512',
            connectTimeoutMs: 12_000,
            initializeTimeoutMs: 34_000,
          },
        },
        {
          id: 'ssh-dev',
          transport: {
            kind: 'stdio',
            program: 'ssh',
            args: ['dev', 'codex exec-server --listen stdio'],
            env: { CODEX_LOG: 'debug' },
            cwd: '/tmp',
            initializeTimeoutMs: 10_000,
          },
        },
      ],
    });
  });

  it('defaults: local included and default; `none` disables; no local and no default disables', () => {
    expect(parse('')).toEqual({ environments: [], default: { id: 'local' }, includeLocal: true });
    expect(parse('default = "NONE"').default).toBe('disabled');
    expect(parse('include_local = false').default).toBe('disabled');
    expect(parse(`default = "local"`).default).toEqual({ id: 'local' });
  });

  it('resolves a relative stdio cwd against the config directory, and needs one', () => {
    const text = entry('id = "ssh-dev"\nprogram = "ssh"\ncwd = "workspace"');
    expect(parse(text, '/home/u/.codex').environments[0]?.transport).toMatchObject({
      cwd: '/home/u/.codex/workspace',
    });
    expect(() => parse(text)).toThrow(
      'exec-server protocol error: environment `ssh-dev` cwd must be absolute',
    );
  });

  it.each([
    [entry('id = "local"\nurl = "ws://127.0.0.1:8765"'), 'environment id `local` is reserved'],
    [entry('id = "None"\nurl = "ws://127.0.0.1:8765"'), 'environment id `None` is reserved'],
    [entry('id = ""\nurl = "ws://127.0.0.1:8765"'), 'environment id cannot be empty'],
    [
      entry('id = " devbox "\nurl = "ws://127.0.0.1:8765"'),
      'environment id ` devbox ` must not contain surrounding whitespace',
    ],
    [
      entry('id = "dev box"\nurl = "ws://127.0.0.1:8765"'),
      "environment id `dev box` must contain only ASCII letters, numbers, '-' or '_'",
    ],
    [
      entry(`id = "${'a'.repeat(65)}"\nurl = "ws://127.0.0.1:8765"`),
      `environment id \`${'a'.repeat(65)}\` cannot be longer than 64 characters`,
    ],
    [
      entry('id = "devbox"\nurl = "http://127.0.0.1:8765"'),
      'environment url `http://127.0.0.1:8765` must use ws:// or wss://',
    ],
    [entry('id = "devbox"\nurl = "ws://"'), 'environment url `ws://` is invalid'],
    [entry('id = "devbox"\nurl = " "'), 'environment url cannot be empty'],
    [
      entry('id = "devbox"\nurl = "ws://127.0.0.1:8765"\nprogram = "codex"'),
      'environment `devbox` must set exactly one of url or program',
    ],
    [entry('id = "devbox"'), 'environment `devbox` must set exactly one of url or program'],
    [entry('id = "devbox"\nprogram = " "'), 'environment `devbox` program cannot be empty'],
    [entry('id = "devbox"\nargs = []'), 'environment `devbox` args, env, and cwd require program'],
    [
      entry('id = "ssh-dev"\nprogram = "ssh"\nconnect_timeout_sec = 1'),
      'environment `ssh-dev` connect_timeout_sec requires url',
    ],
    [
      entry('id = "devbox"\nurl = "ws://127.0.0.1:1"') + entry('id = "devbox"\nprogram = "codex"'),
      'environment id `devbox` is duplicated',
    ],
    ['default = "missing"', 'default environment `missing` is not configured'],
    ['default = " "', 'default environment id cannot be empty'],
    ['default = "local"\ninclude_local = false', 'default environment `local` is not configured'],
  ])('rejects %j', (text, message) => {
    expect(() => parse(text)).toThrow(`exec-server protocol error: ${message}`);
  });

  it.each([
    ['unknown = true', 'unknown field `unknown`'],
    [
      entry('id = "devbox"\nurl = "ws://127.0.0.1:4512"\nunknown = true'),
      'unknown field `unknown`',
    ],
    ['include_local = "yes"', 'include_local: invalid type, expected a boolean'],
    [entry('url = "ws://127.0.0.1:4512"'), 'missing field `id`'],
    [
      entry('id = "d"\nprogram = "p"\nargs = [1]'),
      'args: invalid type, expected an array of strings',
    ],
    [
      entry('id = "d"\nurl = "ws://h:1"\nconnect_timeout_sec = -1'),
      'connect_timeout_sec: cannot convert',
    ],
    ['default = ', 'failed to parse environment config'],
  ])('names the file when %j does not parse', (text, detail) => {
    expect(() => parse(text)).toThrow(`failed to parse environment config \`${PATH}\``);
    expect(() => parse(text)).toThrow(detail);
  });
});
