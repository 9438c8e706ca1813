/**
 * A UI-style status subscriber: a status line that follows an environment's connection while
 * its executor stops and comes back on the same port.
 *
 *   npx tsx examples/status-subscriber.ts
 *
 * `connectionState$` replays the current value and emits only on change: `Connected` while a
 * live session is installed, `Disconnected` otherwise. (`status$` beside it says what the
 * connection is doing — connecting, recovering with the time of the next try, refreshing,
 * retired — for a richer indicator.)
 */
import { defer, firstValueFrom, retry, switchMap } from 'rxjs';
import { LazyRemoteExecServerClient, webSocketUrl } from 'execrx';
import { startExecServer } from 'execrx/server';

let server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
const environment = new LazyRemoteExecServerClient(webSocketUrl(server.url));
environment.connectionState$.subscribe((state) => console.log(`[status] executor ${state}`));

// What a UI does on a click: use the environment, and try once more when the session died
// (the first use after a restart waits for recovery, which fails; `get()` then reconnects).
const currentDirectoryKind = (): Promise<string> =>
  firstValueFrom(
    defer(() => environment.get()).pipe(
      switchMap((client) => client.fs.getMetadata('/')),
      retry({ count: 2 }),
    ),
  ).then((metadata) => (metadata.isDirectory ? 'a directory' : 'not a directory'));

console.log(`/ is ${await currentDirectoryKind()}`);
const firstSession = (await firstValueFrom(environment.get())).sessionId;

console.log('stopping the executor');
await server.close();
await new Promise((resolve) => setTimeout(resolve, 500)); // recovery keeps trying meanwhile

console.log('starting it again on the same port');
server = await startExecServer({ listen: server.url });
console.log(`/ is ${await currentDirectoryKind()}`);
// A restarted executor process cannot resume the old session: this is a new one.
const secondSession = (await firstValueFrom(environment.get())).sessionId;
console.log(`new session: ${secondSession !== firstSession}`);

environment.close();
await server.close();
