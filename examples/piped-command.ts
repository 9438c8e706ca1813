/**
 * A piped command: run `sh -c …` on an executor, copy its stdout and stderr to ours as they
 * arrive, and print its exit code.
 *
 *   npx tsx examples/piped-command.ts                       # starts its own executor
 *   EXECRX_URL=ws://127.0.0.1:PORT npx tsx examples/piped-command.ts   # or uses yours
 */
import { firstValueFrom, lastValueFrom, switchMap } from 'rxjs';
import { ExecServerClient, connectWebSocket } from 'execrx';
import { startExecServer } from 'execrx/server';

// An executor of our own on a free loopback port, unless one was named.
const server = process.env.EXECRX_URL
  ? undefined
  : await startExecServer({ listen: 'ws://127.0.0.1:0' });
const url = process.env.EXECRX_URL ?? server!.url;

const client = await firstValueFrom(
  connectWebSocket(url).pipe(
    switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'piped-command' })),
  ),
);
try {
  const proc = await firstValueFrom(
    client.startProcess({
      argv: ['sh', '-c', 'echo hello from $0; echo oops >&2; exit 3', 'the executor'],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
    }),
  );
  proc.stdout$.subscribe((bytes) => process.stdout.write(bytes)); // Uint8Array chunks, in order
  proc.stderr$.subscribe((bytes) => process.stderr.write(bytes));
  const exitCode = await firstValueFrom(proc.exit$);
  // exit$ can come before the last output chunk; events$ completes once everything was read.
  await lastValueFrom(proc.events$, { defaultValue: undefined });
  console.log(`exit code: ${exitCode}`);
} finally {
  client.close();
  await server?.close();
}
