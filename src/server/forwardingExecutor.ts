/**
 * An `Executor` that serves nothing itself: each connection handed to it is relayed, message
 * for message, to a fresh connection to an existing WebSocket exec-server (`execrx serve
 * forward`, like `codex exec-server forward`). Sessions, processes and files are the
 * destination's; either side's end ends the other.
 *
 * Messages that arrive before the destination has answered the WebSocket handshake wait, up
 * to MAX_EARLY_MESSAGES; a client that sends more, or a destination that cannot be reached,
 * ends the connection. Guarded by spec/cli/serveForward.spec.ts.
 */
import { Subscription } from 'rxjs';
import type { Transport } from '../transport/transport.js';
import { connectWebSocket } from '../transport/webSocketTransport.js';
import type { Executor, ServedConnection } from './executor.js';

export const MAX_EARLY_MESSAGES = 1024;

function forward(client: Transport, url: string): ServedConnection {
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const subscriptions = new Subscription();
  let destination: Transport | undefined;
  let early: string[] | undefined = [];
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    subscriptions.unsubscribe();
    client.close();
    destination?.close();
    resolveDone();
  };
  subscriptions.add(
    client.incoming$.subscribe({
      next: (text) => {
        if (destination) destination.send(text);
        else if (early && early.length < MAX_EARLY_MESSAGES) early.push(text);
        else end();
      },
      error: end,
      complete: end,
    }),
  );
  subscriptions.add(
    connectWebSocket(url).subscribe({
      next: (transport) => {
        if (ended) return transport.close();
        subscriptions.add(
          transport.incoming$.subscribe({
            next: (text) => client.send(text),
            error: end,
            complete: end,
          }),
        );
        destination = transport;
        for (const text of early ?? []) transport.send(text);
        early = undefined;
      },
      error: end,
    }),
  );
  return { done, close: end };
}

/** The executor of `serve forward`: every connection goes on to `url` (`ws://HOST:PORT`). */
export function createForwardingExecutor(url: string): Executor {
  const connections = new Set<ServedConnection>();
  return {
    serveTransport(transport) {
      const connection = forward(transport, url);
      connections.add(connection);
      void connection.done.then(() => connections.delete(connection));
      return connection;
    },
    get sessionCount() {
      return 0;
    },
    async shutdown() {
      const closing = [...connections].map((connection) => {
        connection.close();
        return connection.done;
      });
      await Promise.all(closing);
    },
  };
}
