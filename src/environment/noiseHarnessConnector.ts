/**
 * The default way into a Noise rendezvous: the harness transport of `src/transport`, loaded on
 * the first Noise connection (a session over plain WebSocket never loads the Noise channel;
 * the bundled CLI keeps it in a chunk of its own, see scripts/bundle-cli.mjs).
 */
import { defer, switchMap, type Observable, type SchedulerLike } from 'rxjs';
import type { NoiseRendezvousConnectBundle } from '../registry/index.js';
import type { Transport } from '../transport/transport.js';
import { INITIALIZE_TIMEOUT_MS } from './constants.js';
import type { NoiseTransportParams } from './transportParams.js';

/** Opens the harness stream for `bundle` as `params` configure it. */
export function openNoiseHarness(
  params: NoiseTransportParams,
  bundle: NoiseRendezvousConnectBundle,
  scheduler: SchedulerLike | undefined,
): Observable<Transport> {
  if (params.connectHarness) return params.connectHarness(bundle, params.identity);
  return defer(() => import('../transport/noiseHarnessTransport.js')).pipe(
    switchMap(({ connectNoiseHarness }) =>
      connectNoiseHarness(bundle, params.identity, {
        handshakeTimeoutMs: params.initializeTimeoutMs ?? INITIALIZE_TIMEOUT_MS,
        ...params.harness,
        ...(scheduler ? { scheduler } : {}),
      }),
    ),
  );
}
