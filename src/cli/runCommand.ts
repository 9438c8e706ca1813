/**
 * `execrx run`: run one command on an executor (a URL, or one embedded in this process),
 * stream its output as it arrives, forward stdin and Ctrl-C, and exit with its exit code.
 */
import type { Command } from './command.js';
import { openEndpoint } from './openEndpoint.js';
import { formatOptions, parseOptions, type OptionSpec } from './parseOptions.js';
import type { RunRequest } from './runProcess.js';
import { TARGET_OPTIONS, toEndpointTarget } from './targetOptions.js';
import { UsageError } from './usageError.js';

const OPTIONS: readonly OptionSpec[] = [
  ...TARGET_OPTIONS,
  {
    name: 'tty',
    kind: 'flag',
    description: 'Run on a remote 80x24 terminal (stdout and stderr merge)',
  },
  {
    name: 'cwd',
    kind: 'value',
    valueName: 'DIR',
    description: "Working directory on the executor host; default: the executor's own",
  },
  { name: 'env', kind: 'list', valueName: 'K=V', description: 'Set a variable for the command' },
  {
    name: 'inherit-env',
    kind: 'value',
    valueName: 'all|core|none',
    description:
      "Which of the executor's variables the command starts from (default all; names with KEY, SECRET or TOKEN are dropped)",
  },
  {
    name: 'no-stdin',
    kind: 'flag',
    description: 'Give the command an empty stdin instead of forwarding ours',
  },
];

const HELP = `Usage: execrx run [options] [--] COMMAND [ARGS...]

Runs COMMAND on an executor and streams its stdout and stderr here as they arrive.
Our stdin is forwarded to it. Ctrl-C interrupts it (SIGINT to its process group), a
second Ctrl-C kills it. Exits with its exit code (128+N after death by signal N).

The protocol cannot close a remote stdin: a command that reads until end of input
(like \`cat\`) keeps waiting after ours ends. Use --no-stdin when it should read
nothing, or --tty, where our end of input is sent as Ctrl-D.

Options:
${formatOptions(OPTIONS)}

Examples:
  execrx run -- uname -a
  execrx run --url ws://127.0.0.1:4321 --cwd /tmp --env DEBUG=1 -- sh -c 'ls; echo $DEBUG'
  execrx run --url ws://build-box:4321 --token-file ~/.execrx/token -- make
  CODEX_API_KEY=secret execrx run --registry http://127.0.0.1:8080 --environment-id dev -- ls
  execrx run --environment devbox -- ls    # [[environments]] id = "devbox" in $CODEX_HOME/environments.toml
  printf 'one\\ntwo\\n' | execrx run -- head -n 1`;

export const runCommand: Command = {
  name: 'run',
  summary: 'Run a command on an executor and stream its output',
  help: HELP,
  async run(args, streams) {
    const parsed = parseOptions('run', args, OPTIONS, true);
    if (parsed.help) {
      streams.stdout.write(`${HELP}\n`);
      return 0;
    }
    const request = toRunRequest(parsed);
    // Opened first: a registry endpoint sends its first lookup before it loads the client, so
    // the registry answers while the client loads.
    const endpoint = await openEndpoint(request.target, 'run');
    // Loaded on demand so that help and usage errors stay fast.
    const loaded = import('./runProcess.js');
    loaded.catch(() => endpoint.close());
    const { runProcess } = await loaded;
    return runProcess(endpoint, request, streams);
  },
};

function toRunRequest(parsed: ReturnType<typeof parseOptions>): RunRequest {
  if (parsed.rest.length === 0) throw new UsageError('missing the command to run', 'run');
  const env: Record<string, string> = {};
  for (const pair of parsed.lists.get('env') ?? []) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new UsageError(`--env expects NAME=VALUE, got \`${pair}\``, 'run');
    env[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  const inherit = parsed.values.get('inherit-env') ?? 'all';
  if (inherit !== 'all' && inherit !== 'core' && inherit !== 'none') {
    throw new UsageError(`--inherit-env expects all, core or none, got \`${inherit}\``, 'run');
  }
  return {
    target: toEndpointTarget(parsed, 'run'),
    tty: parsed.flags.has('tty'),
    cwd: parsed.values.get('cwd'),
    env,
    inherit,
    pipeStdin: !parsed.flags.has('no-stdin'),
    argv: parsed.rest,
  };
}
