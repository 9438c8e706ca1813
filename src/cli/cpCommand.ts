/**
 * `execrx cp`: copy files and directories between this machine and an executor, in either
 * direction, like `scp -r` (`remote:PATH` is on the executor). Streams 1 MiB blocks; shows
 * a progress line on a terminal.
 */
import type { Command } from './command.js';
import { formatOptions, parseOptions, type OptionSpec } from './parseOptions.js';
import { parseLocation } from './remotePath.js';
import { TARGET_OPTIONS, toEndpointTarget } from './targetOptions.js';
import { UsageError } from './usageError.js';

const OPTIONS: readonly OptionSpec[] = [...TARGET_OPTIONS];

const HELP = `Usage: execrx cp [options] SOURCE DESTINATION

Copies a file or a directory tree between this machine and an executor; one of SOURCE and
DESTINATION is on the executor, written remote:PATH (a relative PATH starts in the
executor's working directory). A DESTINATION that is an existing directory receives SOURCE
under its own name; otherwise it is the new name. Files are streamed in 1 MiB blocks; on a
terminal a progress line shows bytes, rate and time left.

Symbolic links are followed to files; links to directories and special files are skipped
(with a warning). File modes and times are not copied. An interrupted copy leaves a partial
file behind.

Options:
${formatOptions(OPTIONS)}

Examples:
  execrx cp --url ws://127.0.0.1:4321 ./dist remote:/srv/app
  execrx cp --environment devbox remote:/var/log/app.log .`;

export const cpCommand: Command = {
  name: 'cp',
  summary: 'Copy files and directories to or from an executor',
  help: HELP,
  async run(args, streams) {
    const parsed = parseOptions('cp', args, OPTIONS, true);
    if (parsed.help) {
      streams.stdout.write(`${HELP}\n`);
      return 0;
    }
    const target = toEndpointTarget(parsed, 'cp');
    if (parsed.rest.length !== 2) {
      throw new UsageError('expects SOURCE and DESTINATION', 'cp');
    }
    const [source, destination] = parsed.rest.map(parseLocation) as [
      ReturnType<typeof parseLocation>,
      ReturnType<typeof parseLocation>,
    ];
    if (source.side === destination.side) {
      throw new UsageError(
        source.side === 'local'
          ? 'one of SOURCE and DESTINATION must be on the executor (remote:PATH)'
          : 'copying between two executor paths is not supported; use `execrx run -- cp -r`',
        'cp',
      );
    }
    const { copy } = await import('./copyCommandRun.js');
    return copy(target, source, destination, streams);
  },
};
