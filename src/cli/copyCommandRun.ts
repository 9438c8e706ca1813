/** The `cp` and `ls` work on one session (loaded on demand so that help stays fast). */
import { firstValueFrom } from 'rxjs';
import type { CliStreams } from './command.js';
import { absolutePath, CopyError, planCopy, remoteReason, runCopy } from './copyFiles.js';
import type { EndpointTarget } from './endpoint.js';
import { formatBytes, progressBar } from './progressBar.js';
import { remoteDisplay, type Location } from './remotePath.js';
import { withSession } from './session.js';

/** Copies `source` to `destination`; resolves with the exit status. */
export function copy(
  target: EndpointTarget,
  source: Location,
  destination: Location,
  streams: CliStreams,
): Promise<number> {
  return withSession(target, 'cp', streams, async (client) => {
    const from = await absolutePath(client, source);
    const to = await absolutePath(client, destination);
    const plan = await planCopy(client, source.side, from, to);
    for (const skipped of plan.skipped) {
      streams.stderr.write(`execrx: skipping ${skipped}: not a regular file or directory\n`);
    }
    const progress = progressBar(streams.stderr, plan.totalBytes);
    try {
      await runCopy(client, source.side, plan, progress);
    } finally {
      progress.done();
    }
    return 0;
  });
}

/** Lists `location` (a directory's entries, or the file itself); `long` adds type, size and time. */
export function list(
  target: EndpointTarget,
  location: Location,
  long: boolean,
  streams: CliStreams,
): Promise<number> {
  return withSession(target, 'ls', streams, async (client) => {
    const path = await absolutePath(client, location);
    const fail = (error: unknown): never => {
      throw new CopyError(`${remoteDisplay(path)}: ${remoteReason(error)}`);
    };
    const metadata = await firstValueFrom(client.fs.getMetadata(path)).catch(fail);
    if (!metadata.isDirectory) {
      streams.stdout.write(`${long ? longPrefix(metadata) : ''}${path}\n`);
      return 0;
    }
    const entries = [...(await firstValueFrom(client.fs.readDirectory(path)).catch(fail))].sort(
      (a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0),
    );
    for (const entry of entries) {
      const name = `${entry.fileName}${entry.isDirectory ? '/' : ''}`;
      if (!long) {
        streams.stdout.write(`${name}\n`);
        continue;
      }
      const child = `${path.endsWith('/') ? path : `${path}/`}${entry.fileName}`;
      const details = await firstValueFrom(client.fs.getMetadata(child)).catch(() => undefined);
      streams.stdout.write(`${details === undefined ? '?\t?\t?\t' : longPrefix(details)}${name}\n`);
    }
    return 0;
  });
}

function longPrefix(metadata: {
  isDirectory: boolean;
  isFile: boolean;
  isSymlink: boolean;
  size: number;
  modifiedAtMs: number;
}): string {
  const kind = metadata.isSymlink ? 'l' : metadata.isDirectory ? 'd' : metadata.isFile ? '-' : '?';
  const modified = new Date(metadata.modifiedAtMs).toISOString().slice(0, 19).replace('T', ' ');
  return `${kind}\t${formatBytes(metadata.size)}\t${modified}\t`;
}
