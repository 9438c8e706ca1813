/**
 * `execrx rendezvous`: the self-hostable environment registry + Noise relay, one node of it.
 * Prints its URL as the first stdout line, one stderr line per registry/stream event, and runs
 * until SIGINT/SIGTERM, then drains. Tokens come from files or the environment, never argv
 * (argv is visible to every user in `ps`).
 */
import { readFileSync } from 'node:fs';
import type { Command } from './command.js';
import { formatOptions, parseOptions, type OptionSpec } from './parseOptions.js';
import { shutdownOnSignals } from './shutdownSignal.js';
import { UsageError } from './usageError.js';

const EXECUTOR_TOKEN_ENV = 'EXECRX_RENDEZVOUS_EXECUTOR_TOKEN';
const HARNESS_TOKEN_ENV = 'EXECRX_RENDEZVOUS_HARNESS_TOKEN';
/** `maxHarnessSocketsPerEnvironment` of startRendezvous. */
const DEFAULT_HARNESS_SOCKETS = 64;
/**
 * Upper bound of --max-harness-sockets: the streams an environment may route at once (codex's
 * executor limit, `maxStreamsPerEnvironment`); more sockets could never all carry a stream.
 */
const MAX_HARNESS_SOCKETS = 128;

const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'listen',
    kind: 'value',
    valueName: 'URL',
    description:
      'http://IP:PORT to listen on (port 0 picks a free one); default http://127.0.0.1:0',
  },
  {
    name: 'executor-token-file',
    kind: 'value',
    valueName: 'FILE',
    description: `File holding the token executors register with (else $${EXECUTOR_TOKEN_ENV}, else a random one printed on stderr)`,
  },
  {
    name: 'harness-token-file',
    kind: 'value',
    valueName: 'FILE',
    description: `File holding the token clients ask /connect with, distinct from the executor token (else $${HARNESS_TOKEN_ENV}, else a random one printed on stderr)`,
  },
  {
    name: 'environment-tokens',
    kind: 'value',
    valueName: 'FILE',
    description:
      'Per-environment tokens, one `ENV_ID EXECUTOR_TOKEN HARNESS_TOKEN` line each; such an environment opens with its own pair only',
  },
  {
    name: 'public-url',
    kind: 'value',
    valueName: 'URL',
    description:
      'Base URL executors reach the rendezvous at (a TLS proxy, or a cluster front address); default the bound URL',
  },
  {
    name: 'advertise-url',
    kind: 'value',
    valueName: 'URL',
    description:
      "This node's own base URL for clients; default --public-url, or with --store the bound address",
  },
  {
    name: 'store',
    kind: 'value',
    valueName: 'URL',
    description:
      'redis://HOST:PORT: share registrations with other nodes (a cluster); default in memory',
  },
  {
    name: 'allow-origin',
    kind: 'list',
    valueName: 'ORIGIN',
    description:
      'Browser origin (https://app.example.com) allowed on /connect and harness sockets; without it, browser requests are refused',
  },
  {
    name: 'max-harness-sockets',
    kind: 'value',
    valueName: 'N',
    description: `Client (harness) sockets one environment may hold on this node, each carrying one stream of \`execrx run --registry\`; default ${DEFAULT_HARNESS_SOCKETS}, at most ${MAX_HARNESS_SOCKETS}`,
  },
  {
    name: 'drain-timeout',
    kind: 'value',
    valueName: 'SECONDS',
    description: 'On SIGTERM, wait this long for sockets to move away before closing; default 10',
  },
];

const HELP = `Usage: execrx rendezvous [--listen http://IP:PORT] [options]

Runs an environment registry and the rendezvous relay between executors
(\`execrx serve --remote\`, \`codex exec-server --remote\`) and clients
(\`execrx run --registry\`). The relay only forwards Noise-encrypted frames. Prints
the registry URL as the first line on stdout and one line per event on stderr;
runs until interrupted, then drains (executors reconnect elsewhere).

An environment id is bound to the first executor key that registers it, until that
registration expires (10 minutes without an executor) or its owner deletes it.

Options:
${formatOptions(OPTIONS)}

Example:
  execrx rendezvous --listen http://127.0.0.1:8080 \\
    --executor-token-file /etc/execrx/executor.token --harness-token-file /etc/execrx/harness.token`;

export const rendezvousCommand: Command = {
  name: 'rendezvous',
  summary: 'Run an environment registry and Noise relay for remote executors',
  help: HELP,
  async run(args, streams) {
    const parsed = parseOptions('rendezvous', args, OPTIONS, false);
    if (parsed.help) {
      streams.stdout.write(`${HELP}\n`);
      return 0;
    }
    const listen = parsed.values.get('listen');
    if (listen !== undefined && !/^https?:\/\//.test(listen)) {
      throw new UsageError(`--listen expects http://IP:PORT, got \`${listen}\``, 'rendezvous');
    }
    const store = parsed.values.get('store');
    if (store !== undefined && !/^rediss?:\/\//.test(store)) {
      throw new UsageError(`--store expects redis://HOST:PORT, got \`${store}\``, 'rendezvous');
    }
    const executorToken = token(parsed.values.get('executor-token-file'), EXECUTOR_TOKEN_ENV);
    const harnessToken = token(parsed.values.get('harness-token-file'), HARNESS_TOKEN_ENV);
    if (store !== undefined && (executorToken === undefined || harnessToken === undefined)) {
      throw new UsageError(
        'a cluster node (--store) needs the tokens every node shares: --executor-token-file and --harness-token-file (or the environment variables)',
        'rendezvous',
      );
    }
    const tokensFile = parsed.values.get('environment-tokens');
    const origins = parsed.lists.get('allow-origin') ?? [];
    for (const origin of origins) checkOrigin(origin);
    const drain = parsed.values.get('drain-timeout');
    if (drain !== undefined && !/^\d+(\.\d+)?$/.test(drain)) {
      throw new UsageError(`--drain-timeout expects seconds, got \`${drain}\``, 'rendezvous');
    }
    const sockets = parsed.values.get('max-harness-sockets');
    if (
      sockets !== undefined &&
      (!/^\d+$/.test(sockets) || Number(sockets) < 1 || Number(sockets) > MAX_HARNESS_SOCKETS)
    ) {
      throw new UsageError(
        `--max-harness-sockets expects a number from 1 to ${MAX_HARNESS_SOCKETS}, got \`${sockets}\``,
        'rendezvous',
      );
    }
    const options = {
      ...(listen === undefined ? {} : { listen }),
      ...optional('executorToken', executorToken),
      ...optional('harnessToken', harnessToken),
      ...optional('publicUrl', parsed.values.get('public-url')),
      ...optional('advertiseUrl', parsed.values.get('advertise-url')),
      ...optional('store', store),
      ...(tokensFile === undefined ? {} : { environmentTokens: environmentTokens(tokensFile) }),
      ...(origins.length > 0 ? { allowOrigins: origins } : {}),
      ...(drain === undefined ? {} : { drainTimeoutMs: Number(drain) * 1000 }),
      ...(sockets === undefined ? {} : { maxHarnessSocketsPerEnvironment: Number(sockets) }),
    };
    const { runRendezvousCommand } = await import('../rendezvous/index.js');
    const shutdown = shutdownOnSignals();
    try {
      await runRendezvousCommand({
        ...options,
        writeOut: (line) => streams.stdout.write(`${line}\n`),
        writeErr: (line) => streams.stderr.write(`${line}\n`),
        signal: shutdown.signal,
      });
    } finally {
      shutdown.dispose();
    }
    return 0;
  },
};

function token(file: string | undefined, envName: string): string | undefined {
  if (file !== undefined) {
    const text = readText(file).trim();
    if (text === '') throw new UsageError(`token file \`${file}\` is empty`, 'rendezvous');
    return text;
  }
  const fromEnv = process.env[envName]?.trim();
  return fromEnv === '' ? undefined : fromEnv;
}

function environmentTokens(
  file: string,
): ReadonlyMap<string, { executor: string; harness: string }> {
  const tokens = new Map<string, { executor: string; harness: string }>();
  readText(file)
    .split('\n')
    .forEach((raw, index) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const fields = line.split(/\s+/);
      if (fields.length !== 3) {
        throw new UsageError(
          `${file}:${index + 1}: expected \`ENV_ID EXECUTOR_TOKEN HARNESS_TOKEN\``,
          'rendezvous',
        );
      }
      tokens.set(fields[0]!, { executor: fields[1]!, harness: fields[2]! });
    });
  return tokens;
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read \`${file}\`: ${(error as Error).message}`, 'rendezvous');
  }
}

function checkOrigin(origin: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = undefined;
  }
  if (!parsed || parsed.origin !== origin || parsed.origin === 'null') {
    throw new UsageError(
      `--allow-origin expects an origin such as https://app.example.com (scheme, host, optional port; no path), got \`${origin}\``,
      'rendezvous',
    );
  }
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
