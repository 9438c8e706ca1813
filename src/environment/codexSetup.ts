/**
 * The environments of a user's Codex setup, found as the Rust client finds them
 * (`EnvironmentManager::from_codex_home`, `environment.rs` / `environment_toml.rs` /
 * `environment_provider.rs`). Precedence, first match wins:
 * 1. `CODEX_EXEC_SERVER_NOISE_REGISTRY_URL` + `…_ENVIRONMENT_ID` + `…_AUTH_TOKEN` (all three, or
 *    none; `…_CHATGPT_ACCOUNT_ID` optional): one Noise environment `remote`, the default;
 * 2. `$CODEX_HOME/environments.toml` when the file exists;
 * 3. `CODEX_EXEC_SERVER_URL`: unset or empty → only `local`; `none` → nothing, no default;
 *    a URL → one WebSocket environment `remote`, the default, and no `local`.
 * Guarded by spec/environment/codexSetup.spec.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { NoiseChannelIdentity } from '../noise/identity.js';
import { ProtocolError } from '../protocol/errors.js';
import {
  EnvironmentRegistryClient,
  EnvironmentRegistryConfigError,
  RegistryConnectProvider,
} from '../registry/index.js';
import { errorMessage } from '../transport/errorMessage.js';
import { CONNECT_TIMEOUT_MS } from './constants.js';
import type { Environment } from './environment.js';
import {
  EnvironmentManager,
  LOCAL_ENVIRONMENT_ID,
  type EnvironmentConfig,
  type EnvironmentDefault,
} from './environmentManager.js';
import {
  ENVIRONMENTS_TOML_FILE,
  parseEnvironmentsToml,
  type StdioCommandParams,
} from './environmentsToml.js';
import type { LazyRemoteClientOptions } from './lazyRemoteClient.js';
import {
  localEnvironment,
  stdioCommandEnvironment,
  type LocalExecutorConnector,
  type SingleSessionEnvironment,
} from './singleSessionEnvironment.js';
import {
  noiseRendezvous,
  webSocketUrl,
  type NoiseTransportParams,
  type WebSocketTransportParams,
} from './transportParams.js';

const CODEX_EXEC_SERVER_URL_VARIABLE = 'CODEX_EXEC_SERVER_URL';
const NOISE_REGISTRY_URL_VARIABLE = 'CODEX_EXEC_SERVER_NOISE_REGISTRY_URL';
const NOISE_ENVIRONMENT_ID_VARIABLE = 'CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID';
const NOISE_AUTH_TOKEN_VARIABLE = 'CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN';
export const NOISE_CHATGPT_ACCOUNT_ID_VARIABLE = 'CODEX_EXEC_SERVER_NOISE_CHATGPT_ACCOUNT_ID';
/** Id of the environment named by CODEX_EXEC_SERVER_URL or the Noise variables. */
export const REMOTE_ENVIRONMENT_ID = 'remote';

/** One configured environment and how to reach it. */
export interface CodexSetupEnvironment {
  readonly id: string;
  readonly transport: WebSocketTransportParams | NoiseTransportParams | StdioCommandParams;
}

/** What a Codex setup configures; nothing is connected yet. */
export interface CodexSetup {
  /** Where it came from: the Noise variables, environments.toml, or CODEX_EXEC_SERVER_URL. */
  readonly source: 'noise-variables' | 'environments.toml' | 'CODEX_EXEC_SERVER_URL';
  /** The environments.toml read, when that is the source. */
  readonly path?: string;
  readonly environments: readonly CodexSetupEnvironment[];
  readonly default: EnvironmentDefault;
  /** Whether the `local` environment (an executor in this process) is offered. */
  readonly includeLocal: boolean;
}

/** Where `readCodexSetup` looks: the variables and the Codex home directory. */
export interface CodexSetupOptions {
  /** Variables to read; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Default `$CODEX_HOME`, else `~/.codex`. */
  readonly codexHome?: string;
}

/**
 * Reads the setup (variables and environments.toml) with the Rust client's precedence and
 * validation. Errors: ProtocolError (unreadable or invalid environments.toml) or
 * EnvironmentRegistryConfigError (an incomplete set of Noise variables, a bad registry URL).
 */
export function readCodexSetup(options: CodexSetupOptions = {}): CodexSetup {
  const env = options.env ?? process.env;
  const noise = noiseEnvironment(env);
  if (noise !== undefined) {
    return {
      source: 'noise-variables',
      environments: [{ id: REMOTE_ENVIRONMENT_ID, transport: noise }],
      default: { id: REMOTE_ENVIRONMENT_ID },
      includeLocal: false,
    };
  }
  const codexHome = options.codexHome ?? codexHomeOf(env);
  const path = join(codexHome, ENVIRONMENTS_TOML_FILE);
  if (existsSync(path)) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ProtocolError(
        `failed to read environment config \`${path}\`: ${errorMessage(error)}`,
      );
    }
    return { source: 'environments.toml', path, ...parseEnvironmentsToml(text, path, codexHome) };
  }
  return urlSetup(env[CODEX_EXEC_SERVER_URL_VARIABLE]);
}

/** `$CODEX_HOME` (trimmed), else `~/.codex`. */
function codexHomeOf(env: Readonly<Record<string, string | undefined>>): string {
  const configured = env.CODEX_HOME?.trim();
  return configured ? configured : join(homedir(), '.codex');
}

function urlSetup(raw: string | undefined): CodexSetup {
  const url = raw?.trim() ?? '';
  const source = 'CODEX_EXEC_SERVER_URL';
  if (url === '') {
    return { source, environments: [], default: { id: LOCAL_ENVIRONMENT_ID }, includeLocal: true };
  }
  if (url.toLowerCase() === 'none') {
    return { source, environments: [], default: 'disabled', includeLocal: false };
  }
  return {
    source,
    environments: [
      {
        id: REMOTE_ENVIRONMENT_ID,
        transport: webSocketUrl(url, { connectTimeoutMs: CONNECT_TIMEOUT_MS }),
      },
    ],
    default: { id: REMOTE_ENVIRONMENT_ID },
    includeLocal: false,
  };
}

/** The `CODEX_EXEC_SERVER_NOISE_*` variables, trimmed (what the Noise environment is built from). */
export interface NoiseVariables {
  readonly registryUrl: string;
  readonly environmentId: string;
  readonly token: string;
  readonly chatgptAccountId?: string;
}

/**
 * The Noise variables of `env`: undefined when none of the three is set; an incomplete set is an
 * EnvironmentRegistryConfigError.
 */
export function readNoiseVariables(
  env: Readonly<Record<string, string | undefined>>,
): NoiseVariables | undefined {
  const value = (name: string): string | undefined => {
    const trimmed = env[name]?.trim();
    return trimmed ? trimmed : undefined;
  };
  const registryUrl = value(NOISE_REGISTRY_URL_VARIABLE);
  const environmentId = value(NOISE_ENVIRONMENT_ID_VARIABLE);
  const token = value(NOISE_AUTH_TOKEN_VARIABLE);
  if (registryUrl === undefined && environmentId === undefined && token === undefined) {
    return undefined;
  }
  if (registryUrl === undefined || environmentId === undefined || token === undefined) {
    throw new EnvironmentRegistryConfigError(
      `Noise environment requires ${NOISE_REGISTRY_URL_VARIABLE}, ${NOISE_ENVIRONMENT_ID_VARIABLE}, and ${NOISE_AUTH_TOKEN_VARIABLE}`,
    );
  }
  const chatgptAccountId = value(NOISE_CHATGPT_ACCOUNT_ID_VARIABLE);
  return {
    registryUrl,
    environmentId,
    token,
    ...(chatgptAccountId === undefined ? {} : { chatgptAccountId }),
  };
}

function noiseEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): NoiseTransportParams | undefined {
  const variables = readNoiseVariables(env);
  if (variables === undefined) return undefined;
  const { registryUrl, environmentId, token, chatgptAccountId } = variables;
  const registry = new EnvironmentRegistryClient({
    baseUrl: registryUrl,
    bearerToken: token,
    ...(chatgptAccountId === undefined ? {} : { chatgptAccountId }),
  });
  return noiseRendezvous(
    new RegistryConnectProvider(registry, environmentId),
    NoiseChannelIdentity.generate(),
  );
}

/** An environment of a Codex setup: remote (ws, Noise), a stdio command, or local. */
export type CodexEnvironment = Environment | SingleSessionEnvironment;

/**
 * Options of `CodexEnvironments.open`: where to read the setup, and what backs the `local`
 * environment.
 */
export interface OpenCodexEnvironmentsOptions extends CodexSetupOptions {
  /**
   * The executor behind `local` (`startLocalExecutor()` from `execrx/server`). Required when
   * the setup includes the local environment; the environments own it from then on.
   */
  readonly local?: LocalExecutorConnector;
  /** Options of every remote environment's lazy client. */
  readonly client?: LazyRemoteClientOptions;
  /** Receives the stderr of stdio executors; default: discarded. */
  readonly onStdioStderr?: (environmentId: string, text: string) => void;
}

/**
 * The environments of a Codex setup, by id, with its default. Remote (ws, Noise) environments
 * start connecting in the background; stdio and local ones connect on first use.
 */
export class CodexEnvironments {
  private constructor(
    readonly setup: CodexSetup,
    private readonly environments: ReadonlyMap<string, CodexEnvironment>,
    private readonly remote: EnvironmentManager,
  ) {}

  /** `readCodexSetup(options)`, then `fromSetup`. */
  static open(options: OpenCodexEnvironmentsOptions = {}): CodexEnvironments {
    return CodexEnvironments.fromSetup(readCodexSetup(options), options);
  }

  /** Builds the environments of `setup`. Errors (ProtocolError) if `local` is needed but missing. */
  static fromSetup(
    setup: CodexSetup,
    options: Omit<OpenCodexEnvironmentsOptions, keyof CodexSetupOptions> = {},
  ): CodexEnvironments {
    if (setup.includeLocal && options.local === undefined) {
      throw new ProtocolError(
        'the local environment needs an executor in this process: pass `local: startLocalExecutor()` (execrx/server), or set include_local = false',
      );
    }
    const remote: EnvironmentConfig[] = [];
    for (const { id, transport } of setup.environments) {
      if (transport.kind !== 'stdio') remote.push({ id, transport });
    }
    const manager = EnvironmentManager.fromSnapshot(
      { environments: remote, default: 'disabled', includeLocal: false },
      options.client === undefined ? {} : { client: options.client },
    );
    const environments = new Map<string, CodexEnvironment>();
    if (setup.includeLocal && options.local !== undefined) {
      environments.set(LOCAL_ENVIRONMENT_ID, localEnvironment(LOCAL_ENVIRONMENT_ID, options.local));
    }
    const onStderr = options.onStdioStderr;
    for (const { id, transport } of setup.environments) {
      const environment =
        transport.kind === 'stdio'
          ? stdioCommandEnvironment(
              id,
              transport,
              onStderr === undefined ? undefined : (text) => onStderr(id, text),
            )
          : manager.getEnvironment(id);
      if (environment !== undefined) environments.set(id, environment);
    }
    return new CodexEnvironments(setup, environments, manager);
  }

  /** The environment with `id`, if configured. */
  get(id: string): CodexEnvironment | undefined {
    return this.environments.get(id);
  }

  /** The default environment's id, unless defaults are disabled. */
  get defaultId(): string | undefined {
    return this.setup.default === 'disabled' ? undefined : this.setup.default.id;
  }

  /** The default environment, unless defaults are disabled. */
  get defaultEnvironment(): CodexEnvironment | undefined {
    const id = this.defaultId;
    return id === undefined ? undefined : this.environments.get(id);
  }

  /** Every id: `local` first when included, then in configured order. */
  get ids(): readonly string[] {
    return [...this.environments.keys()];
  }

  /** Closes every environment (stdio children are terminated, the local executor shut down). */
  close(): void {
    for (const id of this.ids) {
      if (this.remote.getEnvironment(id) === undefined) this.environments.get(id)?.close();
    }
    this.remote.close();
  }
}
