/** In-memory executors reached through a Noise harness connector (for virtual-time tests). */
import { Observable } from 'rxjs';
import type { NoiseHarnessConnector } from '../../../src/environment/index.js';
import type { Transport } from '../../../src/transport/transport.js';
import { fakeConnection, type FakeExecutor } from '../../client/support/fakeExecutor.js';

/** In-memory executors for one session id; each harness connect reaches a fresh one. */
export class FakeExecutors {
  readonly executors: FakeExecutor[] = [];
  readonly transports: Transport[] = [];
  private sessions = 0;

  readonly connect: NoiseHarnessConnector = () =>
    new Observable<Transport>((subscriber) => {
      const { transport } = this.open(`session-${++this.sessions}`);
      subscriber.next(transport);
      subscriber.complete();
    });

  /** A transport to an executor that answers `initialize` with `sessionId`. */
  open(sessionId: string): { transport: Transport; executor: FakeExecutor } {
    const connection = fakeConnection(sessionId);
    connection.executor.handlers.set('environment/status', () => ({ status: 'ready' }));
    this.executors.push(connection.executor);
    this.transports.push(connection.transport);
    return connection;
  }
}
