/**
 * The options that choose an executor, shared by `run`, `cp` and `ls`: `--url`, `--registry`
 * (+ `--environment-id`, `--token-env`), `--environment` (the user's Codex setup), or none
 * (an executor embedded in this process).
 */
import { readFileSync } from 'node:fs';
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
    description:
      'Variable holding the bearer token: for --url an executor started with --ws-auth, for --registry the registry (default CODEX_API_KEY)',
  },
  {
    name: 'token-file',
    kind: 'value',
    valueName: 'PATH',
    description: 'File holding the bearer token (trimmed), instead of --token-env',
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
  const tokenFile = parsed.values.get('token-file');
  if (registryUrl === undefined && environmentId !== undefined) {
    throw new UsageError('--environment-id needs --registry', command);
  }
  if (url === undefined && registryUrl === undefined) {
    if (tokenEnv !== undefined || tokenFile !== undefined)
      throw new UsageError('--token-env and --token-file need --url or --registry', command);
  }
  if (configured !== undefined) {
    if (configured.trim() === '') throw new UsageError('--environment needs an id', command);
    return { kind: 'configured', environmentId: configured.trim() };
  }
  if (url !== undefined) {
    if (!/^wss?:\/\//.test(url)) {
      throw new UsageError(`--url expects ws://HOST:PORT or wss://…, got \`${url}\``, command);
    }
    const { token, variable } = bearerToken(tokenFile, tokenEnv, undefined, command);
    if (token === undefined && variable !== undefined)
      throw new UsageError(`--token-env names ${variable}, which is empty or unset`, command);
    return token === undefined ? { kind: 'url', url } : { kind: 'url', url, token };
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
  const { token, variable } = bearerToken(tokenFile, tokenEnv, 'CODEX_API_KEY', command);
  if (token === undefined) {
    throw new UsageError(`--registry needs a bearer token in the ${variable} variable`, command);
  }
  return { kind: 'registry', registryUrl, environmentId, token };
}

/**
 * The bearer token in `--token-file` or in the variable `--token-env` (else `defaultVariable`)
 * names, trimmed, with the variable consulted; never taken from the command line itself,
 * where `ps` would show it.
 */
function bearerToken(
  file: string | undefined,
  variable: string | undefined,
  defaultVariable: string | undefined,
  command: string,
): { token?: string; variable?: string } {
  if (file !== undefined && variable !== undefined)
    throw new UsageError('--token-file and --token-env exclude each other', command);
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(
        `cannot read --token-file ${file}: ${(error as Error).message}`,
        command,
      );
    }
    if (text.trim() === '') throw new UsageError(`--token-file ${file} is empty`, command);
    return { token: text.trim() };
  }
  const name = variable ?? defaultVariable;
  if (name === undefined) return {};
  const token = (process.env[name] ?? '').trim();
  return token === '' ? { variable: name } : { token, variable: name };
}
