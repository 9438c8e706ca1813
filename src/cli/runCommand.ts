/**
 * `execrx run`: run one command on an executor (a URL, or one embedded in this process),
 * stream its output as it arrives, forward stdin and Ctrl-C, and exit with its exit code.
 */
import { readFileSync } from 'node:fs';
import type { Command } from './command.js';
import { formatOptions, parseOptions, type OptionSpec } from './parseOptions.js';
import type { RunRequest, RunTarget } from './runProcess.js';
import { UsageError } from './usageError.js';

const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'url',
    kind: 'value',
    valueName: 'URL',
    description:
      'Executor to use (ws://HOST:PORT); default: an executor embedded in this process (over Noise)',
  },
  {
    name: 'registry',
    kind: 'value',
    valueName: 'URL',
    description:
      'Environment registry (http(s)://…) to ask for a Noise connect bundle; needs --environment-id',
  },
  {
    name: 'environment-id',
    kind: 'value',
    valueName: 'ID',
    description: 'Environment to run on, as registered with --registry',
  },
  {
    name: 'token-env',
    kind: 'value',
    valueName: 'NAME',
    description:
      'Variable holding the bearer token: for --url an executor started with --ws-auth, for --registry the registry (default CODEX_API_KEY)',
  },
  {
    name: 'token-file',
    kind: 'value',
    valueName: 'PATH',
    description: 'File holding the bearer token (trimmed), instead of --token-env',
  },
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
    // Loaded on demand so that help and usage errors stay fast.
    const { runProcess } = await import('./runProcess.js');
    return runProcess(request, streams);
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
    target: toRunTarget(parsed),
    tty: parsed.flags.has('tty'),
    cwd: parsed.values.get('cwd'),
    env,
    inherit,
    pipeStdin: !parsed.flags.has('no-stdin'),
    argv: parsed.rest,
  };
}

function toRunTarget(parsed: ReturnType<typeof parseOptions>): RunTarget {
  const url = parsed.values.get('url');
  const registryUrl = parsed.values.get('registry');
  const environmentId = parsed.values.get('environment-id');
  if (url !== undefined && registryUrl !== undefined) {
    throw new UsageError('--url and --registry exclude each other', 'run');
  }
  if (registryUrl === undefined) {
    if (environmentId !== undefined) {
      throw new UsageError('--environment-id needs --registry', 'run');
    }
    if (url === undefined) {
      if (parsed.values.has('token-env') || parsed.values.has('token-file'))
        throw new UsageError('--token-env and --token-file need --url or --registry', 'run');
      return { kind: 'embedded' };
    }
    if (!/^wss?:\/\//.test(url)) {
      throw new UsageError(`--url expects ws://HOST:PORT or wss://…, got \`${url}\``, 'run');
    }
    const { token, variable } = bearerToken(parsed, undefined);
    if (token === undefined && variable !== undefined)
      throw new UsageError(`--token-env names ${variable}, which is empty or unset`, 'run');
    return token === undefined ? { kind: 'url', url } : { kind: 'url', url, token };
  }
  if (!/^https?:\/\//.test(registryUrl)) {
    throw new UsageError(`--registry expects http(s)://HOST[:PORT], got \`${registryUrl}\``, 'run');
  }
  if (environmentId === undefined || environmentId.trim() === '') {
    throw new UsageError('--registry needs --environment-id', 'run');
  }
  const { token, variable } = bearerToken(parsed, 'CODEX_API_KEY');
  if (token === undefined) {
    throw new UsageError(`--registry needs a bearer token in the ${variable} variable`, 'run');
  }
  return { kind: 'registry', registryUrl, environmentId, token };
}

/**
 * The bearer token in `--token-file` or in the variable `--token-env` (else `defaultVariable`)
 * names, trimmed, with the variable consulted; never taken from the command line itself,
 * where `ps` would show it.
 */
function bearerToken(
  parsed: ReturnType<typeof parseOptions>,
  defaultVariable: string | undefined,
): { token?: string; variable?: string } {
  const file = parsed.values.get('token-file');
  const variable = parsed.values.get('token-env');
  if (file !== undefined && variable !== undefined)
    throw new UsageError('--token-file and --token-env exclude each other', 'run');
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read --token-file ${file}: ${(error as Error).message}`, 'run');
    }
    if (text.trim() === '') throw new UsageError(`--token-file ${file} is empty`, 'run');
    return { token: text.trim() };
  }
  const name = variable ?? defaultVariable;
  if (name === undefined) return {};
  const token = (process.env[name] ?? '').trim();
  return token === '' ? { variable: name } : { token, variable: name };
}
