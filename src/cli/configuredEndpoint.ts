/**
 * `--environment ID`: an environment of the user's Codex setup as an endpoint of `execrx run`
 * and friends (see endpoint.ts).
 */
import {
  CodexEnvironments,
  readCodexSetup,
  type CodexSetup,
  type CodexSetupEnvironment,
} from '../environment/codexSetup.js';
import { LOCAL_ENVIRONMENT_ID } from '../environment/index.js';
import { SingleSessionEnvironment } from '../environment/singleSessionEnvironment.js';
import { startLocalExecutor } from '../server/localExecutor.js';
import type { Endpoint } from './endpoint.js';
import { UsageError } from './usageError.js';

/** Environment `id` of a Codex setup: `local`, or the setup's entry (`chosen`, one). */
export interface ConfiguredChoice {
  readonly setup: CodexSetup;
  readonly chosen: readonly CodexSetupEnvironment[];
  readonly isLocal: boolean;
}

/**
 * Finds environment `id` in the user's Codex setup (the Noise variables,
 * $CODEX_HOME/environments.toml or CODEX_EXEC_SERVER_URL, as codex reads them). An id the setup
 * does not configure is a UsageError of `command` listing the ones it does.
 */
export function findConfiguredEnvironment(id: string, command: string): ConfiguredChoice {
  const setup = readCodexSetup();
  const chosen = setup.environments.filter((environment) => environment.id === id);
  const isLocal = id === LOCAL_ENVIRONMENT_ID && setup.includeLocal;
  if (chosen.length === 0 && !isLocal) {
    const ids = [
      ...(setup.includeLocal ? [LOCAL_ENVIRONMENT_ID] : []),
      ...setup.environments.map((environment) => environment.id),
    ];
    const where =
      setup.path ??
      (setup.source === 'noise-variables'
        ? 'the CODEX_EXEC_SERVER_NOISE_* variables'
        : 'CODEX_EXEC_SERVER_URL');
    throw new UsageError(
      `environment \`${id}\` is not configured by ${where}; configured: ${ids.length === 0 ? 'none' : ids.join(', ')}`,
      command,
    );
  }
  return { setup, chosen, isLocal };
}

/**
 * Environment `id` of the user's Codex setup (findConfiguredEnvironment); `local` is an
 * executor in this process.
 */
export function configuredEndpoint(id: string, command: string): Endpoint {
  const { setup, chosen, isLocal } = findConfiguredEnvironment(id, command);
  const local = isLocal ? startLocalExecutor() : undefined;
  const environments = CodexEnvironments.fromSetup(
    { ...setup, environments: chosen, default: { id }, includeLocal: isLocal },
    local === undefined ? {} : { local },
  );
  const environment = environments.get(id)!;
  const kind = isLocal ? 'local executor' : (chosen[0]?.transport.kind ?? 'environment');
  return {
    label: `environment ${id} (${kind})`,
    open: () =>
      environment instanceof SingleSessionEnvironment ? environment : environment.client,
    close: async () => {
      environments.close();
      // Wait until the local executor's processes are gone (closing started it).
      await local?.shutdown();
    },
  };
}
