/**
 * What `execrx console` connects its page to, from the shared target options: a ws:// executor
 * or an executor embedded in this process (both through the pass-through), a registry's
 * environment (the page talks Noise itself), or an environment of the user's Codex setup, by
 * kind: ws URL → the pass-through to it; Noise variables → the page's registry target; a stdio
 * command or `local` → a transport this process opens per page connection (a stdio child, a
 * connection to an executor in this process). Guarded by spec/cli/consoleEnvironment.spec.ts.
 */
import {
  NOISE_CHATGPT_ACCOUNT_ID_VARIABLE,
  readNoiseVariables,
} from '../environment/codexSetup.js';
import { spawnStdioCommand } from '../environment/singleSessionEnvironment.js';
import type { ConsoleTarget } from './consoleServer.js';
import { findConfiguredEnvironment } from './configuredEndpoint.js';
import type { EndpointTarget } from './endpoint.js';
import { UsageError } from './usageError.js';

/** A console target and the release of what was started for it. */
export interface OpenConsoleTarget {
  readonly target: ConsoleTarget;
  close(): Promise<void>;
}

const nothing = async (): Promise<void> => undefined;

/** The console target `target` names; `command` names the subcommand in usage errors. */
export async function openConsoleTarget(
  target: EndpointTarget,
  command: string,
): Promise<OpenConsoleTarget> {
  switch (target.kind) {
    case 'registry':
      return { target, close: nothing };
    case 'url':
      return { target: { kind: 'executor', url: target.url, label: target.url }, close: nothing };
    case 'embedded': {
      const { startExecServer } = await import('../server/execServer.js');
      const executor = await startExecServer({ listen: 'ws://127.0.0.1:0' });
      return {
        target: { kind: 'executor', url: executor.url, label: 'embedded executor' },
        close: () => executor.close(),
      };
    }
    case 'configured':
      return configuredConsoleTarget(target.environmentId, command);
  }
}

async function configuredConsoleTarget(id: string, command: string): Promise<OpenConsoleTarget> {
  const { chosen, isLocal } = findConfiguredEnvironment(id, command);
  const label = (kind: string): string => `environment ${id} (${kind})`;
  if (isLocal) {
    const { startLocalExecutor } = await import('../server/localExecutor.js');
    const local = startLocalExecutor();
    return {
      target: { kind: 'transport', open: () => local.connect(), label: label('local executor') },
      close: () => local.shutdown(),
    };
  }
  const transport = chosen[0]!.transport;
  switch (transport.kind) {
    case 'websocket':
      return {
        target: { kind: 'executor', url: transport.url, label: label(transport.url) },
        close: nothing,
      };
    case 'stdio':
      return {
        target: {
          kind: 'transport',
          open: () => spawnStdioCommand(transport),
          label: label('stdio'),
        },
        close: nothing,
      };
    case 'noise': {
      // Only the Noise variables configure a Noise environment (readCodexSetup).
      const noise = readNoiseVariables(process.env)!;
      if (noise.chatgptAccountId !== undefined) {
        throw new UsageError(
          `the console page cannot send ${NOISE_CHATGPT_ACCOUNT_ID_VARIABLE}: unset it, or use \`execrx run --environment ${id}\``,
          command,
        );
      }
      return {
        target: {
          kind: 'registry',
          registryUrl: noise.registryUrl,
          environmentId: noise.environmentId,
          token: noise.token,
        },
        close: nothing,
      };
    }
  }
}
