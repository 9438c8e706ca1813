/**
 * `execrx serve --noise`: the executor in direct Noise mode. Prints the bound ws:// URL, then
 * one JSON line with what a harness needs besides it to build a connect bundle.
 */
import { startDirectNoiseExecServer } from '../server/relay/index.js';
import type { CliStreams } from './command.js';
import { shutdownOnSignals } from './shutdownSignal.js';

/** The second stdout line of `serve --noise` (connect bundle fields, without the URL). */
export interface DirectNoiseAnnouncement {
  readonly environmentId: string;
  readonly executorRegistrationId: string;
  readonly executorPublicKey: unknown;
}

export async function serveDirectNoise(
  options: { readonly listen: string; readonly environmentId: string | undefined },
  streams: CliStreams,
): Promise<number> {
  const shutdown = shutdownOnSignals();
  try {
    const server = await startDirectNoiseExecServer({
      listen: options.listen,
      ...(options.environmentId === undefined ? {} : { environmentId: options.environmentId }),
    });
    const announcement: DirectNoiseAnnouncement = {
      environmentId: server.environmentId,
      executorRegistrationId: server.registrationId,
      executorPublicKey: server.identity.toJSON(),
    };
    streams.stdout.write(`${server.url}\n${JSON.stringify(announcement)}\n`);
    await shutdown.aborted;
    await server.close();
    return 0;
  } finally {
    shutdown.dispose();
  }
}
