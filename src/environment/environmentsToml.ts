/**
 * `$CODEX_HOME/environments.toml` (upstream `environment_toml.rs`): the environments a Codex
 * user configured, with the Rust client's validation and error texts. Pure: parsing and
 * validation only; nothing connects here.
 *
 * ```toml
 * default = "devbox"          # an id, "none" (no default) or omitted (local, if included)
 * include_local = false       # default true
 * [[environments]]
 * id = "devbox"
 * url = "ws://127.0.0.1:4512"  # or: program = "ssh", args = [...], env = {...}, cwd = "..."
 * connect_timeout_sec = 12.0   # url only; initialize_timeout_sec for both
 * ```
 * Guarded by spec/environment/environmentsToml.spec.ts.
 */
import { isAbsolute, join } from 'node:path';
import { parse, TomlError } from 'smol-toml';
import { ProtocolError } from '../protocol/errors.js';
import { errorMessage } from '../transport/errorMessage.js';
import { CONNECT_TIMEOUT_MS, INITIALIZE_TIMEOUT_MS } from './constants.js';
import { LOCAL_ENVIRONMENT_ID as LOCAL_ID, type EnvironmentDefault } from './environmentManager.js';
import type { WebSocketTransportParams } from './transportParams.js';

export const ENVIRONMENTS_TOML_FILE = 'environments.toml';
/** Longest accepted environment id (`MAX_ENVIRONMENT_ID_LEN`). */
const MAX_ENVIRONMENT_ID_LENGTH = 64;

/** An executor the client spawns and speaks newline-delimited JSON-RPC to on its stdio. */
export interface StdioCommandParams {
  readonly kind: 'stdio';
  readonly program: string;
  readonly args: readonly string[];
  /** Added to (and overriding) this process's environment for the child. */
  readonly env: Readonly<Record<string, string>>;
  /** Absolute working directory of the child; default ours. */
  readonly cwd?: string;
  /** `initialize` budget, default 10 s. */
  readonly initializeTimeoutMs: number;
}

/** One `[[environments]]` entry, validated. */
export interface ConfiguredEnvironment {
  readonly id: string;
  readonly transport: WebSocketTransportParams | StdioCommandParams;
}

/** What environments.toml configures. */
export interface EnvironmentsTomlConfig {
  readonly environments: readonly ConfiguredEnvironment[];
  readonly default: EnvironmentDefault;
  readonly includeLocal: boolean;
}

const TOP_FIELDS = ['default', 'include_local', 'environments'] as const;
const ENTRY_FIELDS = [
  'id',
  'url',
  'program',
  'args',
  'env',
  'cwd',
  'connect_timeout_sec',
  'initialize_timeout_sec',
] as const;

/**
 * Parses and validates the text of an environments.toml read from `path`. A relative stdio
 * `cwd` is resolved against `configDir` (the CODEX_HOME); without one it is an error.
 * Errors: ProtocolError with the Rust client's wording.
 */
export function parseEnvironmentsToml(
  text: string,
  path: string,
  configDir?: string,
): EnvironmentsTomlConfig {
  const fail = (detail: string): never => {
    throw new ProtocolError(`failed to parse environment config \`${path}\`: ${detail}`);
  };
  let document: Record<string, unknown>;
  try {
    document = parse(text);
  } catch (error) {
    return fail(error instanceof TomlError ? error.message : errorMessage(error));
  }
  checkFields(document, TOP_FIELDS, fail);
  const defaultId = optional(document, 'default', 'a string', isString, fail);
  const includeLocal = optional(document, 'include_local', 'a boolean', isBoolean, fail) ?? true;
  const rawEntries = optional(document, 'environments', 'an array of tables', Array.isArray, fail);
  const entries = (rawEntries ?? []).map((entry: unknown, index) => {
    if (!isTable(entry)) return fail(`environments[${index}]: invalid type, expected a table`);
    checkFields(entry, ENTRY_FIELDS, fail);
    return entry;
  });
  const ids = new Set<string>(includeLocal ? [LOCAL_ID] : []);
  const environments = entries.map((entry) => {
    const configured = parseEntry(entry, configDir, fail);
    if (ids.has(configured.id)) {
      throw new ProtocolError(`environment id \`${configured.id}\` is duplicated`);
    }
    ids.add(configured.id);
    return configured;
  });
  return {
    environments,
    default: normalizeDefault(defaultId, includeLocal, ids),
    includeLocal,
  };
}

function parseEntry(
  entry: Record<string, unknown>,
  configDir: string | undefined,
  fail: (detail: string) => never,
): ConfiguredEnvironment {
  const id = optional(entry, 'id', 'a string', isString, fail);
  if (id === undefined) return fail('missing field `id`');
  const url = optional(entry, 'url', 'a string', isString, fail);
  const program = optional(entry, 'program', 'a string', isString, fail);
  const args = optional(entry, 'args', 'an array of strings', isStringArray, fail);
  const env = optional(entry, 'env', 'a table of strings', isStringTable, fail);
  const cwd = optional(entry, 'cwd', 'a string', isString, fail);
  const connectTimeoutMs = seconds(entry, 'connect_timeout_sec', fail);
  const initializeTimeoutMs = seconds(entry, 'initialize_timeout_sec', fail);

  validateEnvironmentId(id);
  if (program === undefined && (args !== undefined || env !== undefined || cwd !== undefined)) {
    throw new ProtocolError(`environment \`${id}\` args, env, and cwd require program`);
  }
  if (url === undefined && connectTimeoutMs !== undefined) {
    throw new ProtocolError(`environment \`${id}\` connect_timeout_sec requires url`);
  }
  if ((url === undefined) === (program === undefined)) {
    throw new ProtocolError(`environment \`${id}\` must set exactly one of url or program`);
  }
  if (url !== undefined) {
    return {
      id,
      transport: {
        kind: 'websocket',
        url: validateWebSocketUrl(url),
        connectTimeoutMs: connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
        initializeTimeoutMs: initializeTimeoutMs ?? INITIALIZE_TIMEOUT_MS,
      },
    };
  }
  const trimmedProgram = (program ?? '').trim();
  if (trimmedProgram === '')
    throw new ProtocolError(`environment \`${id}\` program cannot be empty`);
  const resolvedCwd = resolveCwd(id, cwd, configDir);
  return {
    id,
    transport: {
      kind: 'stdio',
      program: trimmedProgram,
      args: args ?? [],
      env: env ?? {},
      ...(resolvedCwd === undefined ? {} : { cwd: resolvedCwd }),
      initializeTimeoutMs: initializeTimeoutMs ?? INITIALIZE_TIMEOUT_MS,
    },
  };
}

/** The id rules of environments.toml (`validate_environment_id`). */
function validateEnvironmentId(id: string): void {
  const trimmed = id.trim();
  if (trimmed === '') throw new ProtocolError('environment id cannot be empty');
  if (trimmed !== id) {
    throw new ProtocolError(`environment id \`${id}\` must not contain surrounding whitespace`);
  }
  if (id === LOCAL_ID || id.toLowerCase() === 'none') {
    throw new ProtocolError(`environment id \`${id}\` is reserved`);
  }
  if (id.length > MAX_ENVIRONMENT_ID_LENGTH) {
    throw new ProtocolError(
      `environment id \`${id}\` cannot be longer than ${MAX_ENVIRONMENT_ID_LENGTH} characters`,
    );
  }
  if (!/^[A-Za-z0-9_-]+$/.test(id)) {
    throw new ProtocolError(
      `environment id \`${id}\` must contain only ASCII letters, numbers, '-' or '_'`,
    );
  }
}

/** Trimmed `ws://` or `wss://` URL with a host, or ProtocolError. */
function validateWebSocketUrl(raw: string): string {
  const url = raw.trim();
  if (url === '') throw new ProtocolError('environment url cannot be empty');
  if (!url.startsWith('ws://') && !url.startsWith('wss://')) {
    throw new ProtocolError(`environment url \`${url}\` must use ws:// or wss://`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new ProtocolError(`environment url \`${url}\` is invalid: ${String(error)}`);
  }
  if (parsed.hostname === '') {
    throw new ProtocolError(`environment url \`${url}\` is invalid: no host`);
  }
  return url;
}

function normalizeDefault(
  raw: string | undefined,
  includeLocal: boolean,
  ids: ReadonlySet<string>,
): EnvironmentDefault {
  if (raw === undefined) return includeLocal ? { id: LOCAL_ID } : 'disabled';
  const id = raw.trim();
  if (id === '') throw new ProtocolError('default environment id cannot be empty');
  if (id.toLowerCase() === 'none') return 'disabled';
  if (!ids.has(id)) throw new ProtocolError(`default environment \`${id}\` is not configured`);
  return { id };
}

function resolveCwd(
  id: string,
  cwd: string | undefined,
  configDir: string | undefined,
): string | undefined {
  if (cwd === undefined || isAbsolute(cwd)) return cwd;
  if (configDir === undefined)
    throw new ProtocolError(`environment \`${id}\` cwd must be absolute`);
  return join(configDir, cwd);
}

function seconds(
  table: Record<string, unknown>,
  field: string,
  fail: (detail: string) => never,
): number | undefined {
  const value = optional(table, field, 'a number of seconds', isNumber, fail);
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value < 0) {
    return fail(`${field}: cannot convert float seconds to Duration: ${value}`);
  }
  return value * 1000;
}

function checkFields(
  table: Record<string, unknown>,
  known: readonly string[],
  fail: (detail: string) => never,
): void {
  for (const key of Object.keys(table)) {
    if (!known.includes(key)) {
      fail(`unknown field \`${key}\`, expected one of ${known.map((k) => `\`${k}\``).join(', ')}`);
    }
  }
}

function optional<T>(
  table: Record<string, unknown>,
  field: string,
  expected: string,
  is: (value: unknown) => value is T,
  fail: (detail: string) => never,
): T | undefined {
  const value = table[field];
  if (value === undefined) return undefined;
  if (!is(value)) return fail(`${field}: invalid type, expected ${expected}`);
  return value;
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}
function isBoolean(value: unknown): value is boolean {
  return typeof value === 'boolean';
}
function isNumber(value: unknown): value is number {
  return typeof value === 'number';
}
function isTable(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
  );
}
function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isString);
}
function isStringTable(value: unknown): value is Record<string, string> {
  return isTable(value) && Object.values(value).every(isString);
}
