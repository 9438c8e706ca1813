/**
 * `environmentConfig/read` (spec §9.3; behaviour probed on 0.169.0, spec/fixtures/FINDINGS.md):
 * the executor-local config and requirements layers for `cwd`, each reduced to the requested
 * TOML paths (`configPaths`, `requirementsPaths`, each a list of key segments), plus the
 * executor's home, Codex home and host name. Layers left empty by the projection are dropped.
 *
 * Errors as on the binary: no path at all, or an empty path → -32602; a `cwd` that is not a
 * `file:` URI of this host → -32602; an unreadable or unparsable layer → -32603
 * `failed to load executor-local config: …`. Guarded by spec/server/environmentConfig.spec.ts
 * and spec/conformance/capabilitiesSuite.ts.
 */
import { realpathSync, statSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import {
  loadLocalLayers,
  projectStack,
  type ConfigLocations,
  type LayerStack,
} from './configLayers.js';
import { pathFromUri, uriFromPath } from './hostPath.js';
import { PathUriError } from '../protocol/pathUri.js';
import { errorMessage } from '../protocol/errorMessage.js';
import { RpcFailure } from './rpcFailure.js';
import { printToml } from './tomlText.js';

export interface EnvironmentConfigReadParams {
  cwd: string;
  configPaths: string[][];
  requirementsPaths: string[][];
}

interface WireLayerStack {
  layers: { source: string; baseDir: string; toml: string }[];
  cloudInsertionIndex: number;
}

export interface EnvironmentConfigReadResult {
  userHomeDir: string | null;
  codexHomeDir: string;
  hostname: string | null;
  config: WireLayerStack;
  requirements: WireLayerStack;
}

const SYSTEM_CONFIG_DIR = '/etc/codex';

/**
 * Where this executor's config lives: `codexHome` when given, else `$CODEX_HOME` (which must be
 * an existing directory, as on the binary), else `~/.codex`; canonical when it exists.
 */
export function configLocations(
  codexHome?: string,
  systemDir: string = SYSTEM_CONFIG_DIR,
): ConfigLocations {
  const fromEnv = process.env.CODEX_HOME;
  if (codexHome === undefined && fromEnv) {
    const quoted = JSON.stringify(fromEnv);
    let info;
    try {
      info = statSync(fromEnv);
    } catch {
      throw RpcFailure.internal(
        `failed to find Codex home: CODEX_HOME points to ${quoted}, but that path does not exist`,
      );
    }
    if (!info.isDirectory())
      throw RpcFailure.internal(
        `failed to find Codex home: CODEX_HOME points to ${quoted}, but that path is not a directory`,
      );
  }
  const chosen = codexHome ?? (fromEnv ? fromEnv : join(homedir(), '.codex'));
  let canonical = chosen;
  try {
    canonical = realpathSync(chosen);
  } catch {
    // `~/.codex` need not exist: it is reported as it is.
  }
  return { codexHome: canonical, systemDir };
}

function validatePaths(params: EnvironmentConfigReadParams): void {
  if (params.configPaths.length === 0 && params.requirementsPaths.length === 0)
    throw RpcFailure.invalidParams('at least one config or requirements path is required');
  if ([...params.configPaths, ...params.requirementsPaths].some((path) => path.length === 0))
    throw RpcFailure.invalidParams('TOML paths must contain at least one key segment');
}

function wireStack(stack: LayerStack): WireLayerStack {
  return {
    layers: stack.layers.map((layer) => ({
      source: layer.source,
      baseDir: uriFromPath(layer.baseDir),
      toml: printToml(layer.toml),
    })),
    cloudInsertionIndex: stack.cloudInsertionIndex,
  };
}

function homeUri(): string | null {
  try {
    const home = homedir();
    return home ? uriFromPath(home) : null;
  } catch {
    return null;
  }
}

export async function readEnvironmentConfig(
  params: EnvironmentConfigReadParams,
  locations: () => ConfigLocations = () => configLocations(),
): Promise<EnvironmentConfigReadResult> {
  validatePaths(params);
  let cwd: string;
  try {
    cwd = pathFromUri(params.cwd);
  } catch (error) {
    if (error instanceof PathUriError) throw RpcFailure.invalidParams(error.message);
    throw error;
  }
  const where = locations();
  let stacks: Awaited<ReturnType<typeof loadLocalLayers>>;
  try {
    stacks = await loadLocalLayers(where, cwd);
  } catch (error) {
    throw RpcFailure.internal(`failed to load executor-local config: ${errorMessage(error)}`);
  }
  const name = hostname();
  return {
    userHomeDir: homeUri(),
    codexHomeDir: uriFromPath(where.codexHome),
    hostname: name === '' ? null : name,
    config: wireStack(projectStack(stacks.config, params.configPaths)),
    requirements: wireStack(projectStack(stacks.requirements, params.requirementsPaths)),
  };
}
