/**
 * `execrx serve`: the TypeScript executor as a server, like `codex exec-server --listen`.
 * Prints the bound `ws://` URL as the first stdout line; runs until SIGINT/SIGTERM (or, with
 * `--listen stdio`, until its input ends).
 */
import type { Command } from './command.js';
import { formatOptions, parseOptions, type OptionSpec } from './parseOptions.js';
import { UsageError } from './usageError.js';

const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'listen',
    kind: 'value',
    valueName: 'URL',
    description: 'ws://IP:PORT (port 0 picks a free one) or stdio; default ws://127.0.0.1:0',
  },
  // The Noise modes (`--remote URL --environment-id ID`, direct Noise) plug in here.
];

const HELP = `Usage: execrx serve [--listen ws://IP:PORT|stdio]

Serves the exec-server protocol with the TypeScript executor. With a ws:// address it
prints the bound URL (e.g. ws://127.0.0.1:4321) as the first line on stdout and runs
until interrupted; with stdio it speaks newline-delimited JSON on stdin/stdout and
stops at the end of stdin. Every process it started is killed when it stops.

Options:
${formatOptions(OPTIONS)}`;

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Serve the exec-server protocol with the TypeScript executor',
  help: HELP,
  async run(args, streams) {
    const parsed = parseOptions('serve', args, OPTIONS, false);
    if (parsed.help) {
      streams.stdout.write(`${HELP}\n`);
      return 0;
    }
    const listen = parsed.values.get('listen') ?? 'ws://127.0.0.1:0';
    const { startExecServer } = await import('../server/index.js');
    let server;
    try {
      server = await startExecServer({ listen, input: streams.stdin, output: streams.stdout });
    } catch (error) {
      // Bad addresses get the binary's texts from parseListenUrl.
      if (error instanceof Error && /--listen URL/.test(error.message)) {
        throw new UsageError(error.message, 'serve');
      }
      throw error;
    }
    if (server.url !== 'stdio') streams.stdout.write(`${server.url}\n`);
    const stop = (): void => void server.close();
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    try {
      await server.closed;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
    return 0;
  },
};
