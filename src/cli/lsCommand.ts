/** `execrx ls remote:PATH`: list a directory (or show a file) on an executor. */
import type { Command } from './command.js';
import { formatOptions, parseOptions, type OptionSpec } from './parseOptions.js';
import { parseLocation } from './remotePath.js';
import { TARGET_OPTIONS, toEndpointTarget } from './targetOptions.js';
import { UsageError } from './usageError.js';

const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'long',
    kind: 'flag',
    description: 'Also show type (d, -, l), size and modification time',
  },
  ...TARGET_OPTIONS,
];

const HELP = `Usage: execrx ls [options] remote:PATH

Lists the directory PATH on an executor, one entry per line in name order, directories
with a trailing /; a file is listed by itself. A relative PATH (or remote: alone) starts
in the executor's working directory.

Options:
${formatOptions(OPTIONS)}

Examples:
  execrx ls --url ws://127.0.0.1:4321 remote:/srv/app
  execrx ls --long --environment devbox remote:`;

export const lsCommand: Command = {
  name: 'ls',
  summary: 'List a directory on an executor',
  help: HELP,
  async run(args, streams) {
    const parsed = parseOptions('ls', args, OPTIONS, true);
    if (parsed.help) {
      streams.stdout.write(`${HELP}\n`);
      return 0;
    }
    const target = toEndpointTarget(parsed, 'ls');
    if (parsed.rest.length !== 1) throw new UsageError('expects one remote:PATH', 'ls');
    const location = parseLocation(parsed.rest[0] as string);
    if (location.side !== 'remote') {
      throw new UsageError(
        `expects a path on the executor, remote:PATH, got \`${parsed.rest[0]}\``,
        'ls',
      );
    }
    const { list } = await import('./copyCommandRun.js');
    return list(target, location, parsed.flags.has('long'), streams);
  },
};
