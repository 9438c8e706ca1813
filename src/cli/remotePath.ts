/**
 * Paths on the command line of `cp` and `ls`, as `scp` writes them: `remote:PATH` is on the
 * executor, anything else on this machine.
 */
const REMOTE_PREFIX = 'remote:';

export type Location =
  | { readonly side: 'local'; readonly path: string }
  | { readonly side: 'remote'; readonly path: string };

export function parseLocation(argument: string): Location {
  if (argument.startsWith(REMOTE_PREFIX)) {
    const path = argument.slice(REMOTE_PREFIX.length);
    return { side: 'remote', path: path === '' ? '.' : path };
  }
  return { side: 'local', path: argument };
}

/** `remote:/srv/app`, for messages. */
export function remoteDisplay(path: string): string {
  return `${REMOTE_PREFIX}${path}`;
}
