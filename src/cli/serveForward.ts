/**
 * `execrx serve forward --remote URL --environment-id ID --connect ws://HOST:PORT`: registers
 * with an environment registry, as `serve --remote` does, but serves each relayed connection
 * by forwarding it to an existing WebSocket exec-server (`codex exec-server forward`).
 */
import type { CliStreams } from './command.js';
import { formatOptions, parseOptions, type OptionSpec } from './parseOptions.js';
import { UsageError } from './usageError.js';

const DEFAULT_API_KEY_ENV = 'CODEX_API_KEY';
const COMMAND = 'serve forward';

const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'remote',
    kind: 'value',
    valueName: 'URL',
    description: 'The environment registry to register with (http(s)://HOST[:PORT])',
  },
  { name: 'environment-id', kind: 'value', valueName: 'ID', description: 'Environment to serve' },
  {
    name: 'connect',
    kind: 'value',
    valueName: 'URL',
    description: 'The exec-server every connection is forwarded to (ws://HOST:PORT)',
  },
  {
    name: 'api-key-env',
    kind: 'value',
    valueName: 'NAME',
    description: `Variable holding the registry API key (default ${DEFAULT_API_KEY_ENV})`,
  },
];

const FORWARD_HELP = `Usage: execrx serve forward --remote URL --environment-id ID --connect ws://HOST:PORT

Registers an existing WebSocket exec-server (e.g. \`execrx serve\` or \`codex exec-server\`
on a private address) as a remote environment: the registry's clients reach it through the
relay over Noise, and each of their connections is forwarded to --connect as a plain
WebSocket connection. Runs until SIGINT/SIGTERM; the API key comes from $${DEFAULT_API_KEY_ENV}.

Options:
${formatOptions(OPTIONS)}`;

export async function serveForward(args: readonly string[], streams: CliStreams): Promise<number> {
  const parsed = parseOptions(COMMAND, args, OPTIONS, false);
  if (parsed.help) {
    streams.stdout.write(`${FORWARD_HELP}\n`);
    return 0;
  }
  const registryUrl = parsed.values.get('remote');
  const environmentId = parsed.values.get('environment-id');
  const connect = parsed.values.get('connect');
  if (registryUrl === undefined || environmentId === undefined || connect === undefined) {
    throw new UsageError('forward needs --remote, --environment-id and --connect', 'serve');
  }
  if (!/^https?:\/\//.test(registryUrl)) {
    throw new UsageError(`--remote expects http(s)://HOST[:PORT], got \`${registryUrl}\``, 'serve');
  }
  if (!/^wss?:\/\//.test(connect)) {
    throw new UsageError(`--connect expects ws://HOST:PORT, got \`${connect}\``, 'serve');
  }
  const variable = parsed.values.get('api-key-env') ?? DEFAULT_API_KEY_ENV;
  const apiKey = process.env[variable] ?? '';
  if (apiKey.trim() === '') {
    throw new UsageError(`forward needs the registry API key in the ${variable} variable`, 'serve');
  }
  const [{ createForwardingExecutor }, { serveRemote }] = await Promise.all([
    import('../server/forwardingExecutor.js'),
    import('./serveRemote.js'),
  ]);
  const executor = createForwardingExecutor(connect);
  try {
    return await serveRemote({ registryUrl, environmentId, apiKey, executor }, streams);
  } finally {
    await executor.shutdown();
  }
}
