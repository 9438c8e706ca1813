/**
 * Entry point of the `execrx` command (`bin/execrx.js` calls `main` and exits with its
 * result): dispatches to the command table, prints help, and turns errors into one line on
 * stderr with exit code 1 (usage errors: 2).
 */
import { readFileSync } from 'node:fs';
import type { CliStreams } from './command.js';
import { COMMANDS, findCommand } from './commands.js';
import { UsageError } from './usageError.js';

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

function topLevelHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  const list = COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return `Usage: execrx <command> [options]

Run commands on Codex exec-server executors, or be one.

Commands:
${list.join('\n')}

Options:
  -h, --help     Show this help (execrx <command> --help for a command)
  -V, --version  Show the version`;
}

function version(): string {
  // src/cli and dist/cli both sit two levels below package.json.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export async function main(
  argv: string[],
  streams: CliStreams = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const [name, ...args] = argv;
  try {
    if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
      const topic = name === 'help' && args[0] !== undefined ? findCommand(args[0]) : undefined;
      if (name === 'help' && args[0] !== undefined && topic === undefined) {
        throw new UsageError(`unknown command \`${args[0]}\``);
      }
      streams.stdout.write(`${topic?.help ?? topLevelHelp()}\n`);
      return name === undefined ? EXIT_USAGE : 0;
    }
    if (name === '-V' || name === '--version') {
      streams.stdout.write(`execrx ${version()}\n`);
      return 0;
    }
    const command = findCommand(name);
    if (command === undefined) {
      throw new UsageError(
        name.startsWith('-') ? `unknown option \`${name}\`` : `unknown command \`${name}\``,
      );
    }
    return await command.run(args, streams);
  } catch (error) {
    if (error instanceof UsageError) {
      const hint = error.command === undefined ? 'execrx --help' : `execrx ${error.command} --help`;
      streams.stderr.write(`execrx: ${error.message} (see \`${hint}\`)\n`);
      return EXIT_USAGE;
    }
    streams.stderr.write(`execrx: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILURE;
  }
}
