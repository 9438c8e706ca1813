/**
 * The options that choose an executor, shared by `run`, `cp` and `ls`: `--url`, `--registry`
 * (+ `--environment-id`, `--token-env`), `--environment` (the user's Codex setup), or none
 * (an executor embedded in this process).
 */
import type { EndpointTarget } from './endpoint.js';
import type { OptionSpec, parseOptions } from './parseOptions.js';
import { UsageError } from './usageError.js';

export const TARGET_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'url',
    kind: 'value',
    valueName: 'URL',
    description:
      'Executor to use (ws://HOST:PORT); default: an executor embedded in this process (over Noise)',
  },
  {
    name: 'environment',
    kind: 'value',
    valueName: 'ID',
    description:
      'Environment of your Codex setup (CODEX_EXEC_SERVER_NOISE_*, $CODEX_HOME/environments.toml or CODEX_EXEC_SERVER_URL, as codex reads them); `local` is an executor in this process',
  },
  {
    name: 'registry',
    kind: 'value',
    valueName: 'URL',
    description:
      'Environment registry (http(s)://…) to ask for a Noise connect bundle; needs --environment-id',
  },
  {
    name: 'environment-id',
    kind: 'value',
    valueName: 'ID',
    description: 'Environment to use, as registered with --registry',
  },
  {
    name: 'token-env',
    kind: 'value',
    valueName: 'NAME',
    description: 'Variable holding the registry bearer token (default CODEX_API_KEY)',
  },
];

/** The target the parsed options name; contradictions are UsageErrors of `command`. */
export function toEndpointTarget(
  parsed: ReturnType<typeof parseOptions>,
  command: string,
): EndpointTarget {
  const url = parsed.values.get('url');
  const configured = parsed.values.get('environment');
  const registryUrl = parsed.values.get('registry');
  const environmentId = parsed.values.get('environment-id');
  const tokenEnv = parsed.values.get('token-env');
  const chosen = [url && '--url', configured && '--environment', registryUrl && '--registry'];
  const given = chosen.filter((name) => typeof name === 'string');
  if (given.length > 1) throw new UsageError(`${given.join(' and ')} exclude each other`, command);
  if (registryUrl === undefined && (environmentId !== undefined || tokenEnv !== undefined)) {
    throw new UsageError('--environment-id and --token-env need --registry', command);
  }
  if (configured !== undefined) {
    if (configured.trim() === '') throw new UsageError('--environment needs an id', command);
    return { kind: 'configured', environmentId: configured.trim() };
  }
  if (url !== undefined) {
    if (!/^wss?:\/\//.test(url)) {
      throw new UsageError(`--url expects ws://HOST:PORT or wss://…, got \`${url}\``, command);
    }
    return { kind: 'url', url };
  }
  if (registryUrl === undefined) return { kind: 'embedded' };
  if (!/^https?:\/\//.test(registryUrl)) {
    throw new UsageError(
      `--registry expects http(s)://HOST[:PORT], got \`${registryUrl}\``,
      command,
    );
  }
  if (environmentId === undefined || environmentId.trim() === '') {
    throw new UsageError('--registry needs --environment-id', command);
  }
  const variable = tokenEnv ?? 'CODEX_API_KEY';
  const token = process.env[variable] ?? '';
  if (token.trim() === '') {
    throw new UsageError(`--registry needs a bearer token in the ${variable} variable`, command);
  }
  return { kind: 'registry', registryUrl, environmentId, token };
}
