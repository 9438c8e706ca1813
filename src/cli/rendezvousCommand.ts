/**
 * `execrx rendezvous`: the self-hostable environment registry + Noise relay. Prints its URL
 * as the first stdout line, one stderr line per registry/stream event, and runs until
 * SIGINT/SIGTERM.
 */
import type { Command } from './command.js';
import { formatOptions, parseOptions, type OptionSpec } from './parseOptions.js';
import { shutdownOnSignals } from './shutdownSignal.js';
import { UsageError } from './usageError.js';

const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'listen',
    kind: 'value',
    valueName: 'URL',
    description:
      'http://IP:PORT to listen on (port 0 picks a free one); default http://127.0.0.1:0',
  },
  {
    name: 'executor-token',
    kind: 'value',
    valueName: 'T',
    description: 'Bearer token executors register with; default a random one, printed on stderr',
  },
  {
    name: 'harness-token',
    kind: 'value',
    valueName: 'T',
    description: 'Bearer token clients ask /connect with; default the executor token',
  },
  {
    name: 'public-url',
    kind: 'value',
    valueName: 'URL',
    description: 'Base URL clients and executors see (behind a TLS proxy); default the bound URL',
  },
];

const HELP = `Usage: execrx rendezvous [--listen http://IP:PORT] [options]

Runs an environment registry and the rendezvous relay between executors
(\`execrx serve --remote\`, \`codex exec-server --remote\`) and clients
(\`execrx run --registry\`). The relay only forwards Noise-encrypted frames. Prints
the registry URL as the first line on stdout and one line per event on stderr;
runs until interrupted.

Options:
${formatOptions(OPTIONS)}

Example:
  execrx rendezvous --listen http://127.0.0.1:8080 --executor-token secret`;

export const rendezvousCommand: Command = {
  name: 'rendezvous',
  summary: 'Run an environment registry and Noise relay for remote executors',
  help: HELP,
  async run(args, streams) {
    const parsed = parseOptions('rendezvous', args, OPTIONS, false);
    if (parsed.help) {
      streams.stdout.write(`${HELP}\n`);
      return 0;
    }
    const listen = parsed.values.get('listen');
    if (listen !== undefined && !/^https?:\/\//.test(listen)) {
      throw new UsageError(`--listen expects http://IP:PORT, got \`${listen}\``, 'rendezvous');
    }
    const options = {
      ...(listen === undefined ? {} : { listen }),
      ...optional('executorToken', parsed.values.get('executor-token')),
      ...optional('harnessToken', parsed.values.get('harness-token')),
      ...optional('publicUrl', parsed.values.get('public-url')),
    };
    const { runRendezvousCommand } = await import('../rendezvous/index.js');
    const shutdown = shutdownOnSignals();
    try {
      await runRendezvousCommand({
        ...options,
        writeOut: (line) => streams.stdout.write(`${line}\n`),
        writeErr: (line) => streams.stderr.write(`${line}\n`),
        signal: shutdown.signal,
      });
    } finally {
      shutdown.dispose();
    }
    return 0;
  },
};

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
