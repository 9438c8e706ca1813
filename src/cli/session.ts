/**
 * One session on the executor a command's options chose, for commands that make a few calls
 * and end (`cp`, `ls`): open the endpoint, connect, run, then close everything.
 */
import { firstValueFrom } from 'rxjs';
import type { ExecServerClient } from '../client/index.js';
import { ConnectionAttemptError } from '../environment/errors.js';
import type { CliStreams } from './command.js';
import type { EndpointTarget } from './endpoint.js';
import { openEndpoint } from './openEndpoint.js';
import { statusLine } from './statusLine.js';

export async function withSession<T>(
  target: EndpointTarget,
  command: string,
  streams: CliStreams,
  work: (client: ExecServerClient) => Promise<T>,
): Promise<T> {
  const endpoint = await openEndpoint(target, command);
  const owner = endpoint.open();
  const status = statusLine(streams.stderr);
  try {
    status.show(`connecting to ${endpoint.label}…`);
    const client = await firstValueFrom(owner.get()).catch((error: unknown) => {
      throw error instanceof ConnectionAttemptError ? error.cause : error;
    });
    status.clear();
    return await work(client);
  } finally {
    status.clear();
    owner.close();
    await endpoint.close();
  }
}
