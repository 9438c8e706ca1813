/**
 * `execrx serve`: the TypeScript executor as a server, in one of three modes:
 * - plain (`--listen ws://…|stdio`), like `codex exec-server --listen`;
 * - direct Noise (`--noise`): encrypted relay sockets accepted on a ws:// address;
 * - remote (`--remote URL --environment-id ID`), like `codex exec-server --remote`.
 * Runs until SIGINT/SIGTERM (or, with `--listen stdio`, until its input ends).
 */
import type { Command } from './command.js';
import {
  formatOptions,
  parseOptions,
  type OptionSpec,
  type ParsedOptions,
} from './parseOptions.js';
import { applySandboxOptions, SANDBOX_OPTIONS } from './serveSandboxOptions.js';
import { webSocketAuthFlags, WEB_SOCKET_AUTH_OPTIONS } from './serveWebSocketAuthOptions.js';
import { UsageError } from './usageError.js';
import type { ListenAddress } from '../server/execServer.js';
import type { WebSocketAuth } from '../server/webSocketAuth.js';

const DEFAULT_LISTEN = 'ws://127.0.0.1:0';
const DEFAULT_API_KEY_ENV = 'CODEX_API_KEY';

const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'listen',
    kind: 'value',
    valueName: 'URL',
    description: `ws://IP:PORT (port 0 picks a free one) or stdio; default ${DEFAULT_LISTEN}`,
  },
  {
    name: 'noise',
    kind: 'flag',
    description: 'Direct Noise mode: accept encrypted relay sockets on the --listen address',
  },
  {
    name: 'remote',
    kind: 'value',
    valueName: 'URL',
    description: 'Register with the environment registry at URL and serve through its relay',
  },
  {
    name: 'environment-id',
    kind: 'value',
    valueName: 'ID',
    description: 'Environment to serve (required with --remote; --noise default: environment)',
  },
  {
    name: 'no-warm-up',
    kind: 'flag',
    description: 'Serve at once, without first warming the request path (~0.7 s)',
  },
  {
    name: 'concurrent-requests',
    kind: 'value',
    valueName: 'COUNT',
    description:
      'Plain mode: handle at most COUNT requests of a connection at a time (codex exec-server default 1; ours: no limit)',
  },
  {
    name: 'exit-on-stdin-close',
    kind: 'flag',
    description: 'With --remote: exit when standard input (a pipe owned by the parent) closes',
  },
  {
    name: 'name',
    kind: 'value',
    valueName: 'NAME',
    description: 'Human-readable environment name (accepted as by codex exec-server; unused)',
  },
  ...SANDBOX_OPTIONS,
  ...WEB_SOCKET_AUTH_OPTIONS,
  {
    name: 'insecure-no-auth',
    kind: 'flag',
    description:
      'Serve a non-loopback address without --ws-auth (anyone reaching it runs commands)',
  },
  {
    name: 'api-key-env',
    kind: 'value',
    valueName: 'NAME',
    description: `Variable holding the registry API key for --remote (default ${DEFAULT_API_KEY_ENV})`,
  },
];

const HELP = `Usage: execrx serve [--listen ws://IP:PORT|stdio] [--noise] [--no-warm-up]
       execrx serve --listen ws://IP:PORT --ws-auth MODE [--ws-token-file PATH | ...]
       execrx serve --remote URL --environment-id ID [--api-key-env NAME] [--no-warm-up]
                    [--exit-on-stdin-close]
       execrx serve forward --remote URL --environment-id ID --connect ws://HOST:PORT

Serves the exec-server protocol with the TypeScript executor. Every process it started
is killed when it stops (SIGINT/SIGTERM).

Before it serves over the network it warms up (~0.7 s): a throwaway executor on 127.0.0.1
gets a few thousand read-only fs requests, so the code every request runs through is
already optimised when the first client comes (docs/performance.md).
--no-warm-up skips that; stdio mode never warms up.

With a ws:// address it prints the bound URL (e.g. ws://127.0.0.1:4321) as the first
line on stdout and runs until interrupted; with stdio it speaks newline-delimited JSON
on stdin/stdout and stops at the end of stdin.

Whoever reaches a ws:// executor runs commands as this user. With --ws-auth (the flags of
\`codex exec-server\`) every WebSocket upgrade must carry \`Authorization: Bearer <token>\`:
a capability token (--ws-token-file or --ws-token-sha256) or an HS256 JWT signed with
--ws-shared-secret-file; others get HTTP 401. Clients pass the token with
\`execrx run --token-file PATH\` or \`--token-env NAME\`. A non-loopback address is refused
without --ws-auth unless --insecure-no-auth says the network is trusted.

With --noise it accepts Noise-encrypted relay sockets instead (any harness key is
admitted). Line 1 is the URL, line 2 a JSON object with the environmentId,
executorRegistrationId and executorPublicKey a client puts in its connect bundle.

Requests that carry a sandbox (codex's managed permission profile, as \`codex exec
-s workspace-write\` or \`-s read-only\` sends it) run under bubblewrap: the disk read-only
except the writable roots, .git/.agents/.codex kept read-only inside them, no network when
the profile restricts it, and (by default) a PID namespace of their own. Without a working
bwrap such requests are refused, never run unconfined.

\`serve forward\` registers an existing WebSocket exec-server as a remote environment
(\`execrx serve forward --help\`).

With --remote it registers its Noise key with the registry, attaches to the relay the
registry names and serves the environment there, reconnecting with backoff (like
\`codex exec-server --remote\`). It prints one line once it serves; trouble goes to
stderr. Clients connect with \`execrx run --registry URL --environment-id ID\`.

Options:
${formatOptions(OPTIONS)}

Examples:
  execrx serve --listen ws://127.0.0.1:4321
  execrx serve --listen ws://0.0.0.0:4321 --ws-auth capability-token --ws-token-file ~/.execrx/token
  execrx serve --noise
  CODEX_API_KEY=secret execrx serve --remote http://127.0.0.1:8080 --environment-id dev`;

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Serve the exec-server protocol with the TypeScript executor',
  help: HELP,
  async run(args, streams) {
    if (args[0] === 'forward') {
      const { serveForward } = await import('./serveForward.js');
      return serveForward(args.slice(1), streams);
    }
    const parsed = parseOptions('serve', args, OPTIONS, false);
    if (parsed.help) {
      streams.stdout.write(`${HELP}\n`);
      return 0;
    }
    await applySandboxOptions(parsed);
    // Warming up takes a moment: only once the options are known to be good.
    const warmUpFirst = async (): Promise<void> => {
      if (!parsed.flags.has('no-warm-up')) await warmUp(streams);
    };
    const remote = parsed.values.get('remote');
    if (remote !== undefined) {
      const options = remoteOptions(remote, parsed);
      const { serveRemote } = await import('./serveRemote.js');
      await warmUpFirst();
      return serveRemote(options, streams);
    }
    if (parsed.flags.has('exit-on-stdin-close')) {
      throw new UsageError('--exit-on-stdin-close needs --remote and --environment-id', 'serve');
    }
    if (parsed.values.has('api-key-env')) {
      throw new UsageError('--api-key-env needs --remote', 'serve');
    }
    const listen = parsed.values.get('listen') ?? DEFAULT_LISTEN;
    const environmentId = parsed.values.get('environment-id');
    if (parsed.values.has('concurrent-requests') && parsed.flags.has('noise')) {
      throw new UsageError('--concurrent-requests applies to plain --listen mode only', 'serve');
    }
    const authFlags = webSocketAuthFlags(parsed);
    if (authFlags?.mode !== undefined && parsed.flags.has('insecure-no-auth')) {
      throw new UsageError('--insecure-no-auth contradicts --ws-auth', 'serve');
    }
    if (parsed.flags.has('noise')) {
      if (!listen.startsWith('ws://')) {
        throw new UsageError(`--noise listens on ws://IP:PORT only, got \`${listen}\``, 'serve');
      }
      if (authFlags !== undefined) {
        throw new UsageError('--ws-auth applies to plain ws:// serving, not --noise', 'serve');
      }
      const { serveDirectNoise } = await import('./serveNoise.js');
      return checkListenThenServe(listen, parsed, false, warmUpFirst, () =>
        serveDirectNoise({ listen, environmentId }, streams),
      );
    }
    if (environmentId !== undefined) {
      throw new UsageError('--environment-id needs --remote or --noise', 'serve');
    }
    const concurrentRequests = concurrentRequestsOption(parsed);
    // Read (and check) the secrets before warming up; failures exit 1 with the binary's text.
    const { loadWebSocketAuth } = await import('../server/webSocketAuth.js');
    const webSocketAuth = loadWebSocketAuth(authFlags ?? {});
    if (webSocketAuth !== undefined && !listen.startsWith('ws://'))
      throw new Error('WebSocket auth requires a WebSocket listener, not stdio');
    // stdio serves one parent process, which is waiting for it: no warm-up.
    const warmUpUnlessStdio = listen.startsWith('ws://') ? warmUpFirst : async () => undefined;
    return checkListenThenServe(
      listen,
      parsed,
      webSocketAuth !== undefined,
      warmUpUnlessStdio,
      () => servePlain({ listen, webSocketAuth, concurrentRequests }, streams),
    );
  },
};

/** Warms the executor code (server/fastpath/warmUp.ts); a failure is reported and serving goes on. */
async function warmUp(streams: Parameters<Command['run']>[1]): Promise<void> {
  const { warmUpExecutor } = await import('../server/fastpath/warmUp.js');
  try {
    await warmUpExecutor();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    streams.stderr.write(`execrx: warm-up skipped (${reason}); serving anyway\n`);
  }
}

function remoteOptions(
  registryUrl: string,
  parsed: ParsedOptions,
): {
  registryUrl: string;
  environmentId: string;
  apiKey: string;
  exitOnStdinClose: boolean;
} {
  if (parsed.values.has('listen') || parsed.flags.has('noise')) {
    throw new UsageError('--remote excludes --listen and --noise', 'serve');
  }
  if (parsed.values.has('concurrent-requests')) {
    throw new UsageError('--concurrent-requests applies to plain --listen mode only', 'serve');
  }
  if (!/^https?:\/\//.test(registryUrl)) {
    throw new UsageError(`--remote expects http(s)://HOST[:PORT], got \`${registryUrl}\``, 'serve');
  }
  const environmentId = parsed.values.get('environment-id');
  if (environmentId === undefined || environmentId.trim() === '') {
    throw new UsageError('--remote needs --environment-id', 'serve');
  }
  const variable = parsed.values.get('api-key-env') ?? DEFAULT_API_KEY_ENV;
  const apiKey = process.env[variable] ?? '';
  if (apiKey.trim() === '') {
    throw new UsageError(
      `--remote needs the registry API key in the ${variable} variable`,
      'serve',
    );
  }
  return {
    registryUrl,
    environmentId,
    apiKey,
    exitOnStdinClose: parsed.flags.has('exit-on-stdin-close'),
  };
}

/**
 * Checks `listen` (bad addresses get the binary's texts from parseListenUrl, as usage
 * errors) and refuses a non-loopback address without authentication unless
 * `--insecure-no-auth` is given; then warms up and serves.
 */
async function checkListenThenServe(
  listen: string,
  parsed: ParsedOptions,
  authenticated: boolean,
  warmUpFirst: () => Promise<void>,
  serve: () => Promise<number>,
): Promise<number> {
  const { parseListenUrl } = await import('../server/execServer.js');
  let address: ListenAddress;
  try {
    address = parseListenUrl(listen);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), 'serve');
  }
  const insecure = parsed.flags.has('insecure-no-auth');
  if (address.kind === 'websocket' && !isLoopback(address.host) && !authenticated && !insecure) {
    throw new UsageError(
      `refusing to serve ${listen} without authentication: anyone who reaches it runs ` +
        'commands as this user. Pass --ws-auth capability-token --ws-token-file PATH (or ' +
        'signed-bearer-token), or --insecure-no-auth on a network you trust',
      'serve',
    );
  }
  await warmUpFirst();
  return serve();
}

/** `--concurrent-requests COUNT`: a positive integer, worded as the binary words a bad one. */
function concurrentRequestsOption(parsed: ParsedOptions): number | undefined {
  const text = parsed.values.get('concurrent-requests');
  if (text === undefined) return undefined;
  const count = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(count) || count < 1) {
    const why =
      count === 0 ? 'number would be zero for non-zero type' : 'invalid digit found in string';
    throw new UsageError(
      `invalid value '${text}' for '--concurrent-requests <COUNT>': ${why}`,
      'serve',
    );
  }
  return count;
}

/** 127.0.0.0/8 and ::1 (also as IPv4-mapped IPv6). */
function isLoopback(host: string): boolean {
  const v4 = host.toLowerCase().replace(/^::ffff:/, '');
  return /^127\.\d+\.\d+\.\d+$/.test(v4) || host === '::1' || /^(0+:){7}0*1$/.test(host);
}

async function servePlain(
  options: {
    listen: string;
    webSocketAuth: WebSocketAuth | undefined;
    concurrentRequests: number | undefined;
  },
  streams: Parameters<Command['run']>[1],
): Promise<number> {
  const { startExecServer } = await import('../server/execServer.js');
  const server = await startExecServer({
    listen: options.listen,
    input: streams.stdin,
    output: streams.stdout,
    ...(options.webSocketAuth === undefined ? {} : { webSocketAuth: options.webSocketAuth }),
    ...(options.concurrentRequests === undefined
      ? {}
      : { concurrentRequests: options.concurrentRequests }),
  });
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
}
