/** The default way into a Noise rendezvous: the harness transport of `src/transport`. */
import type { Observable, SchedulerLike } from 'rxjs';
import type { NoiseRendezvousConnectBundle } from '../registry/index.js';
import { connectNoiseHarness } from '../transport/noiseHarnessTransport.js';
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
  return connectNoiseHarness(bundle, params.identity, {
    handshakeTimeoutMs: params.initializeTimeoutMs ?? INITIALIZE_TIMEOUT_MS,
    ...params.harness,
    ...(scheduler ? { scheduler } : {}),
  });
}
