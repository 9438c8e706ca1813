/** The default way into a Noise rendezvous: the harness transport of `src/transport`. */
import type { Observable } from 'rxjs';
import { throwError } from 'rxjs';
import { ConnectError } from '../protocol/errors.js';
import type { Transport } from '../transport/transport.js';
import type { NoiseHarnessConnector } from './transportParams.js';

export const defaultNoiseHarnessConnector: NoiseHarnessConnector = (): Observable<Transport> =>
  throwError(() => new ConnectError('Noise harness transport is not available yet'));
