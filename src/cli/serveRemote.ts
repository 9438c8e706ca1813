/**
 * `execrx serve --remote URL --environment-id ID`: registers with an environment registry and
 * serves the environment over its rendezvous relay (like `codex exec-server --remote`),
 * reconnecting with backoff until interrupted.
 */
import type { Executor } from '../server/executor.js';
import { startRemoteExecServer, type RemoteEnvironmentEvent } from '../server/relay/index.js';
import type { CliStreams } from './command.js';
import { shutdownOnSignals } from './shutdownSignal.js';

export interface ServeRemoteOptions {
  readonly registryUrl: string;
  readonly environmentId: string;
  readonly apiKey: string;
  /** Stop (exit 0) when stdin ends, as `codex exec-server --exit-on-stdin-close`. */
  readonly exitOnStdinClose?: boolean;
  /** What serves the relayed connections (default: a new executor of our own). */
  readonly executor?: Executor;
}

export async function serveRemote(
  options: ServeRemoteOptions,
  streams: CliStreams,
): Promise<number> {
  const shutdown = shutdownOnSignals(options.exitOnStdinClose ? streams.stdin : undefined);
  let announced = false;
  const onEvent = (event: RemoteEnvironmentEvent): void => {
    if (event.kind === 'connected' && !announced) {
      announced = true;
      streams.stdout.write(
        `registered environment ${options.environmentId} (registration ${event.registrationId}); serving\n`,
      );
      return;
    }
    const line = describe(event);
    if (line !== undefined) streams.stderr.write(`execrx: ${line}\n`);
  };
  try {
    const server = await startRemoteExecServer({
      registryUrl: options.registryUrl,
      environmentId: options.environmentId,
      apiKey: options.apiKey,
      executor: options.executor,
      onEvent,
    });
    await shutdown.aborted;
    await server.close();
    return 0;
  } finally {
    shutdown.dispose();
  }
}

/** Trouble worth a stderr line; the steady state stays quiet. */
function describe(event: RemoteEnvironmentEvent): string | undefined {
  switch (event.kind) {
    case 'registration-failed':
      return `registration failed: ${event.error.message}`;
    case 'connect-failed':
      return `relay connection failed: ${event.error.message}`;
    case 'disconnected':
      return event.reason === 'local_shutdown' ? undefined : `relay disconnected (${event.reason})`;
    case 'retrying':
      return `reconnecting in ${Math.round(event.delayMs / 100) / 10} s`;
    default:
      return undefined;
  }
}
