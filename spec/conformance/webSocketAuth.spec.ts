/**
 * WebSocket authentication (`--ws-auth`), the same assertions against `codex exec-server`
 * 0.169.0 and `execrx serve`, both started from their command lines with the same flags:
 * which upgrades each admits (101) or refuses (status and text), and which flag sets make
 * each exit 1 before serving, with the same message. Tokens are made by
 * spec/support/webSocketAuthProbe.ts; what the binary answered is in FINDINGS.md.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { filter, firstValueFrom, take } from 'rxjs';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import { assertBuilt, runCli, startCli } from '../cli/support/runCli.js';
import {
  cleanEnv,
  codexCommand,
  startCodexExecServer,
  type RunningExecServer,
} from '../support/codexExecServer.js';
import {
  probeUpgrade,
  signJwt,
  signJwtText,
  type UpgradeAnswer,
} from '../support/webSocketAuthProbe.js';

const TOKEN = 'capability-secret-7f3a';
const SECRET = 'a-shared-secret-of-at-least-32-bytes!';
const ISSUER = 'issuer-1';
const AUDIENCE = 'audience-1';

// Made at load: the tables below name these paths.
const dir = mkdtempSync(join(tmpdir(), 'execrx-ws-auth-'));
const file = (name: string, content: string): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const tokenFile = file('token', `  ${TOKEN} \n`);
const secretFile = file('secret', `${SECRET}\n`);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface StartupOutcome {
  readonly code: number | null;
  readonly stderr: string;
}

interface AuthExecutor {
  start(flags: readonly string[]): Promise<RunningExecServer>;
  /** Runs the executor with `flags`, expecting it to exit before serving. */
  refuse(flags: readonly string[], listen?: string): Promise<StartupOutcome>;
}

const codex: AuthExecutor = {
  start: (flags) => startCodexExecServer({ args: flags }),
  async refuse(flags, listen = 'ws://127.0.0.1:0') {
    const home = await mkdtemp(join(tmpdir(), 'execrx-codex-home-'));
    const { command, prefixArgs } = codexCommand();
    const child = spawn(command, [...prefixArgs, 'exec-server', '--listen', listen, ...flags], {
      env: cleanEnv(undefined, home),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    clearTimeout(timer);
    await rm(home, { recursive: true, force: true });
    return { code, stderr };
  },
};

const ours: AuthExecutor = {
  async start(flags) {
    const serve = startCli(['serve', '--no-warm-up', '--listen', 'ws://127.0.0.1:0', ...flags], {
      timeoutMs: 300_000,
    });
    const [url] = await serve.stdoutLines(1);
    return {
      url: url as string,
      stop: async () => {
        serve.child.kill('SIGTERM');
        await serve.result;
      },
    };
  },
  async refuse(flags, listen = 'ws://127.0.0.1:0') {
    const { code, stderr } = await runCli(['serve', '--no-warm-up', '--listen', listen, ...flags]);
    return { code, stderr };
  },
};

const refused = (status: number, body: string): UpgradeAnswer =>
  body === '' ? { status, body } : { status, body, contentType: 'text/plain; charset=utf-8' };
const admitted: UpgradeAnswer = { status: 101, body: '' };

const now = (): number => Math.floor(Date.now() / 1000);
const claims = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  iss: ISSUER,
  aud: AUDIENCE,
  exp: now() + 300,
  ...extra,
});

/** Tokens for the signed-bearer-token executor and what both executors answer. */
const SIGNED_CASES: ReadonlyArray<readonly [string, () => string, UpgradeAnswer]> = [
  ['a valid token', () => signJwt(SECRET, claims()), admitted],
  [
    'an audience list that holds ours',
    () => signJwt(SECRET, claims({ aud: ['x', AUDIENCE] })),
    admitted,
  ],
  [
    'an expiry 10 s ago (inside the 30 s skew)',
    () => signJwt(SECRET, claims({ exp: now() - 10 })),
    admitted,
  ],
  ['a not-before 10 s ahead', () => signJwt(SECRET, claims({ nbf: now() + 10 })), admitted],
  ['unchecked claims of any type', () => signJwt(SECRET, claims({ iat: 'x', sub: 1 })), admitted],
  [
    'other header fields',
    () => signJwt(SECRET, claims(), { alg: 'HS256', kid: 'k', typ: 'x' }),
    admitted,
  ],
  [
    'an expiry 100 s ago',
    () => signJwt(SECRET, claims({ exp: now() - 100 })),
    refused(401, 'expired websocket jwt'),
  ],
  [
    'no expiry',
    () => signJwt(SECRET, { iss: ISSUER, aud: AUDIENCE }),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'a fractional expiry',
    () => signJwt(SECRET, claims({ exp: now() + 60.5 })),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'an expiry as a string',
    () => signJwt(SECRET, claims({ exp: String(now() + 60) })),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'an expiry beyond i64',
    () =>
      signJwtText(
        SECRET,
        `{"iss":"${ISSUER}","aud":"${AUDIENCE}","exp":100000000000000000000}`,
        '{"alg":"HS256"}',
      ),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'a duplicate expiry',
    () =>
      signJwtText(
        SECRET,
        `{"iss":"${ISSUER}","aud":"${AUDIENCE}","exp":${now() - 100},"exp":${now() + 100}}`,
        '{"alg":"HS256"}',
      ),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'a not-before 100 s ahead',
    () => signJwt(SECRET, claims({ nbf: now() + 100 })),
    refused(401, 'websocket jwt is not valid yet'),
  ],
  [
    'a not-before as a string',
    () => signJwt(SECRET, claims({ nbf: 'soon' })),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'another issuer',
    () => signJwt(SECRET, claims({ iss: 'x' })),
    refused(401, 'websocket jwt issuer mismatch'),
  ],
  [
    'no issuer',
    () => signJwt(SECRET, { aud: AUDIENCE, exp: now() + 60 }),
    refused(401, 'websocket jwt issuer mismatch'),
  ],
  [
    'another audience',
    () => signJwt(SECRET, claims({ aud: 'x' })),
    refused(401, 'websocket jwt audience mismatch'),
  ],
  [
    'an empty audience list',
    () => signJwt(SECRET, claims({ aud: [] })),
    refused(401, 'websocket jwt audience mismatch'),
  ],
  [
    'an audience number',
    () => signJwt(SECRET, claims({ aud: 5 })),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'alg none, unsigned',
    () =>
      `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`,
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'alg HS384',
    () => signJwt(SECRET, claims(), { alg: 'HS384' }),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'alg hs256 (case)',
    () => signJwt(SECRET, claims(), { alg: 'hs256' }),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'no alg',
    () => signJwt(SECRET, claims(), { typ: 'JWT' }),
    refused(401, 'invalid websocket jwt'),
  ],
  ['another secret', () => signJwt(`${SECRET}x`, claims()), refused(401, 'invalid websocket jwt')],
  [
    'the secret with its newline',
    () => signJwt(`${SECRET}\n`, claims()),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'two segments',
    () => signJwt(SECRET, claims()).split('.').slice(0, 2).join('.'),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'a padded signature',
    () => `${signJwt(SECRET, claims())}=`,
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'claims that are an array',
    () => signJwt(SECRET, [claims()]),
    refused(401, 'invalid websocket jwt'),
  ],
  [
    'expired with another audience (expiry first)',
    () => signJwt(SECRET, claims({ exp: now() - 100, aud: 'x' })),
    refused(401, 'expired websocket jwt'),
  ],
  [
    'not yet valid with another audience (nbf before aud)',
    () => signJwt(SECRET, claims({ nbf: now() + 100, aud: 'x' })),
    refused(401, 'websocket jwt is not valid yet'),
  ],
  [
    'another issuer and audience (issuer first)',
    () => signJwt(SECRET, claims({ iss: 'x', aud: 'y' })),
    refused(401, 'websocket jwt issuer mismatch'),
  ],
  [
    'an expired token with another secret (signature first)',
    () => signJwt(`${SECRET}x`, claims({ exp: now() - 100 })),
    refused(401, 'invalid websocket jwt'),
  ],
];

/** Flag sets both executors refuse before serving, with the message they print. */
const STARTUP_REFUSALS: ReadonlyArray<readonly [string, () => string[], string, string?]> = [
  [
    'capability-token without a token',
    () => ['--ws-auth', 'capability-token'],
    '`--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth capability-token` is set',
  ],
  [
    'a missing token file',
    () => ['--ws-auth', 'capability-token', '--ws-token-file', join(dir, 'absent')],
    `failed to read websocket auth secret ${join(dir, 'absent')}: No such file or directory (os error 2)`,
  ],
  [
    'a blank token file',
    () => ['--ws-auth', 'capability-token', '--ws-token-file', file('blank', ' \n')],
    `websocket auth secret ${join(dir, 'blank')} must not be empty`,
  ],
  [
    'a digest that is not 64 hex digits',
    () => ['--ws-auth', 'capability-token', '--ws-token-sha256', 'abc'],
    '--ws-token-sha256 must be a 64-character hex SHA-256 digest',
  ],
  [
    'both a token file and a digest',
    () => [
      '--ws-auth',
      'capability-token',
      '--ws-token-file',
      tokenFile,
      '--ws-token-sha256',
      '0'.repeat(64),
    ],
    '`--ws-token-file` and `--ws-token-sha256` are mutually exclusive',
  ],
  [
    'signed-bearer-token without a secret',
    () => ['--ws-auth', 'signed-bearer-token'],
    '`--ws-shared-secret-file` is required when `--ws-auth signed-bearer-token` is set',
  ],
  [
    'a 31-byte secret',
    () => [
      '--ws-auth',
      'signed-bearer-token',
      '--ws-shared-secret-file',
      file('short', 'x'.repeat(31)),
    ],
    `signed websocket bearer secret ${join(dir, 'short')} must be at least 32 bytes`,
  ],
  [
    'a secret that is 31 bytes once trimmed',
    () => [
      '--ws-auth',
      'signed-bearer-token',
      '--ws-shared-secret-file',
      file('padded', ` ${'x'.repeat(31)} \n`),
    ],
    `signed websocket bearer secret ${join(dir, 'padded')} must be at least 32 bytes`,
  ],
  [
    'a token file without --ws-auth',
    () => ['--ws-token-file', tokenFile],
    'websocket auth flags require `--ws-auth capability-token` or `--ws-auth signed-bearer-token`',
  ],
  [
    'an issuer with capability-token',
    () => ['--ws-auth', 'capability-token', '--ws-token-file', tokenFile, '--ws-issuer', 'x'],
    '`--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and `--ws-max-clock-skew-seconds` require `--ws-auth signed-bearer-token`',
  ],
  [
    'a token file with signed-bearer-token',
    () => [
      '--ws-auth',
      'signed-bearer-token',
      '--ws-shared-secret-file',
      secretFile,
      '--ws-token-file',
      tokenFile,
    ],
    '`--ws-token-file` and `--ws-token-sha256` require `--ws-auth capability-token`, not `signed-bearer-token`',
  ],
  [
    '--ws-auth on stdio',
    () => ['--ws-auth', 'capability-token', '--ws-token-file', tokenFile],
    'WebSocket auth requires a WebSocket listener, not stdio',
    'stdio',
  ],
];

describe.each([
  ['codex exec-server', codex],
  ['execrx serve', ours],
] as const)('WebSocket authentication on %s', (_name, executor) => {
  beforeAll(() => {
    if (executor === ours) assertBuilt();
  });

  /** Starts the executor with `flags` for the enclosing describe; returns a getter. */
  function serving(flags: () => string[]): () => RunningExecServer {
    let server: RunningExecServer | undefined;
    beforeAll(async () => {
      server = await executor.start(flags());
    }, 60_000);
    afterAll(() => server?.stop());
    return () => server as RunningExecServer;
  }

  describe('capability-token from a file', () => {
    const served = serving(() => ['--ws-auth', 'capability-token', '--ws-token-file', tokenFile]);

    it.each([
      ['no Authorization', {}, refused(401, 'missing websocket bearer token')],
      ['the token (trimmed in the file)', { Authorization: `Bearer ${TOKEN}` }, admitted],
      ['the scheme in lower case', { Authorization: `bearer ${TOKEN}` }, admitted],
      ['the scheme in upper case, two spaces', { Authorization: `BEARER  ${TOKEN}` }, admitted],
      [
        'a wrong token',
        { Authorization: 'Bearer wrong' },
        refused(401, 'invalid websocket bearer token'),
      ],
      [
        'a prefix of the token',
        { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
        refused(401, 'invalid websocket bearer token'),
      ],
      [
        'Basic',
        { Authorization: `Basic ${Buffer.from(TOKEN).toString('base64')}` },
        refused(401, 'invalid authorization header'),
      ],
      [
        'the scheme alone',
        { Authorization: 'Bearer' },
        refused(401, 'invalid authorization header'),
      ],
      [
        'the token without a scheme',
        { Authorization: TOKEN },
        refused(401, 'invalid authorization header'),
      ],
      [
        'a tab after the scheme',
        { Authorization: `Bearer\t${TOKEN}` },
        refused(401, 'invalid authorization header'),
      ],
      [
        'the right token and an Origin',
        { Authorization: `Bearer ${TOKEN}`, Origin: 'http://x' },
        refused(403, ''),
      ],
    ] as const)('answers an upgrade with %s', async (_case, headers, answer) => {
      expect(await probeUpgrade(served().url, headers)).toEqual(answer);
    });

    it('checks the token only once the request is an upgrade to /', async () => {
      expect(await probeUpgrade(served().url, {}, '/readyz')).toEqual(refused(200, ''));
      expect(await probeUpgrade(served().url, {}, `/?token=${TOKEN}`)).toEqual(
        refused(401, 'missing websocket bearer token'),
      );
      expect(await probeUpgrade(served().url, {}, '/', false)).toEqual(
        refused(400, "Connection header did not include 'upgrade'"),
      );
    });

    it('serves a client that presents the token (connectWebSocket bearerToken)', async () => {
      const transport = await firstValueFrom(
        connectWebSocket(served().url, { bearerToken: TOKEN }),
      );
      const reply = firstValueFrom(
        transport.incoming$.pipe(
          filter((text) => text.includes('"id":1')),
          take(1),
        ),
      );
      transport.send(
        JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'spec' } }),
      );
      expect(JSON.parse(await reply)).toMatchObject({
        id: 1,
        result: { sessionId: expect.any(String) },
      });
      transport.close();
    });
  });

  describe('capability-token as a SHA-256 digest', () => {
    const served = serving(() => {
      const digest = createHash('sha256').update(TOKEN).digest('hex').toUpperCase();
      return ['--ws-auth', 'capability-token', '--ws-token-sha256', digest];
    });

    it('admits the token and refuses another', async () => {
      expect(await probeUpgrade(served().url, { Authorization: `Bearer ${TOKEN}` })).toEqual(
        admitted,
      );
      expect(await probeUpgrade(served().url, { Authorization: 'Bearer other' })).toEqual(
        refused(401, 'invalid websocket bearer token'),
      );
    });
  });

  describe('signed-bearer-token with an issuer and an audience', () => {
    const served = serving(() => [
      '--ws-auth',
      'signed-bearer-token',
      '--ws-shared-secret-file',
      secretFile,
      '--ws-issuer',
      ISSUER,
      '--ws-audience',
      AUDIENCE,
    ]);

    it.each(SIGNED_CASES)('answers %s', async (_case, token, answer) => {
      expect(await probeUpgrade(served().url, { Authorization: `Bearer ${token()}` })).toEqual(
        answer,
      );
    });

    it('asks for a token', async () => {
      expect(await probeUpgrade(served().url)).toEqual(
        refused(401, 'missing websocket bearer token'),
      );
    });
  });

  describe('signed-bearer-token with no skew, issuer or audience', () => {
    const served = serving(() => [
      '--ws-auth',
      'signed-bearer-token',
      '--ws-shared-secret-file',
      secretFile,
      '--ws-max-clock-skew-seconds',
      '0',
    ]);

    it.each([
      ['an expiry 20 s ago', () => ({ exp: now() - 20 }), refused(401, 'expired websocket jwt')],
      [
        'a not-before 20 s ahead',
        () => ({ exp: now() + 60, nbf: now() + 20 }),
        refused(401, 'websocket jwt is not valid yet'),
      ],
      ['any issuer and audience', () => ({ exp: now() + 60, iss: 'a', aud: 'b' }), admitted],
    ] as const)('answers %s', async (_case, payload, answer) => {
      const token = signJwt(SECRET, payload());
      expect(await probeUpgrade(served().url, { Authorization: `Bearer ${token}` })).toEqual(
        answer,
      );
    });
  });

  it.each(
    STARTUP_REFUSALS.map(([what, flags, message, listen]) => ({ what, flags, message, listen })),
  )(
    'exits 1 without serving on $what',
    async ({ flags, message, listen }) => {
      const outcome = await executor.refuse(flags(), listen);
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toContain(message);
    },
    30_000,
  );
});
