/**
 * `execrx console`: a web console (run commands, terminals, files) whose page runs the execrx
 * client in the browser. Prints the page's URL, with its access token, as the first stdout line
 * and runs until SIGINT/SIGTERM.
 */
import type { Command } from './command.js';
import { formatOptions, parseOptions, type OptionSpec } from './parseOptions.js';
import { TARGET_OPTIONS, toEndpointTarget } from './targetOptions.js';
import { shutdownOnSignals } from './shutdownSignal.js';
import { UsageError } from './usageError.js';

const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'port',
    kind: 'value',
    valueName: 'N',
    description: 'Port on 127.0.0.1 to serve the page on; default 0 (a free one)',
  },
  ...TARGET_OPTIONS,
];

const HELP = `Usage: execrx console [--port N] [--url ws://HOST:PORT | --environment ID | --registry URL --environment-id ID]

Serves a web console on http://127.0.0.1:PORT and prints its URL (with a random
access token, without which the page does not open) as the first line on stdout.
The page runs the execrx client in your browser: live connection status, commands
with their output in a terminal, interactive 80x24 terminals, interrupt and
terminate, a file browser, and a "Refresh connection" action. Runs until interrupted.

With --url (or the default embedded executor) the page reaches the executor through
a WebSocket pass-through on the console's own origin: executors refuse browser
origins, and the pass-through accepts only the console's page with the token.
With --registry the page asks the registry for a connect bundle and talks Noise,
end to end encrypted, through the rendezvous (which must allow the console's origin:
\`execrx rendezvous --allow-origin http://127.0.0.1:PORT\`, so pass --port).
With --environment (an environment of your Codex setup) a ws URL goes through the
pass-through, the CODEX_EXEC_SERVER_NOISE_* environment is a registry as above, and
a stdio command or \`local\` runs in the console's process: one child (or local
connection) per page connection, closed with it.

Options:
${formatOptions(OPTIONS)}

Examples:
  execrx console
  execrx console --url ws://127.0.0.1:4321
  execrx console --environment devbox
  CODEX_API_KEY=secret execrx console --port 8765 --registry http://127.0.0.1:8080 --environment-id dev`;

export const consoleCommand: Command = {
  name: 'console',
  summary: 'Serve a web console that runs the execrx client in the browser',
  help: HELP,
  async run(args, streams) {
    const parsed = parseOptions('console', args, OPTIONS, false);
    if (parsed.help) {
      streams.stdout.write(`${HELP}\n`);
      return 0;
    }
    const portText = parsed.values.get('port') ?? '0';
    const port = Number(portText);
    if (!/^\d+$/.test(portText) || port > 65535) {
      throw new UsageError(`--port expects 0-65535, got \`${portText}\``, 'console');
    }
    const target = toEndpointTarget(parsed, 'console');
    const { startConsoleServer } = await import('./consoleServer.js');
    const { openConsoleTarget } = await import('./consoleTarget.js');
    const { fileURLToPath } = await import('node:url');
    const assetsDir = fileURLToPath(new URL('../console', import.meta.url));
    const shutdown = shutdownOnSignals();
    let opened: Awaited<ReturnType<typeof openConsoleTarget>> | undefined;
    try {
      opened = await openConsoleTarget(target, 'console');
      const server = await startConsoleServer({ target: opened.target, port, assetsDir });
      streams.stdout.write(`${server.url}\n`);
      await shutdown.aborted;
      await server.close();
    } finally {
      shutdown.dispose();
      await opened?.close();
    }
    return 0;
  },
};
