/**
 * What `ExecServerClient.startProcess` takes, and the `process/start` params built from it
 * (spec/protocol.md §6.1).
 */
import { randomUUID } from '../platform/index.js';
import type { ParamsOf } from '../protocol/methods.js';
import { pathToFileUri } from '../protocol/pathUri.js';
import type {
  ExecEnvPolicy,
  ManagedNetwork,
  NetworkProxyLaunch,
  ProcessMetadata,
  ShellSnapshot,
} from '../protocol/process.js';
import type { FileSystemSandboxContext } from '../protocol/sandbox.js';

/** What to run (`process/start`, spec §6.1), with a native `cwd`. */
export interface StartProcessOptions {
  /** Program and arguments; `argv[0]` is resolved through the child's `PATH`. */
  readonly argv: readonly string[];
  /** Native absolute working directory on the executor host. */
  readonly cwd: string;
  /** Unique within the session; default a random UUID. */
  readonly processId?: string;
  /**
   * Child environment. With `envPolicy` omitted or null, the child gets exactly `env`
   * (no inherited `PATH`!). Default `{}`.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Start from the executor's environment filtered by this policy, then overlay `env` (§6.3). */
  readonly envPolicy?: ExecEnvPolicy | null;
  /** Run on an 80×24 pseudo-terminal; output then arrives as stream `pty`. Default false. */
  readonly tty?: boolean;
  /** Keep stdin writable without a terminal. Default false (stdin is /dev/null). */
  readonly pipeStdin?: boolean;
  /** Override the child's visible `argv[0]`. */
  readonly arg0?: string | null;
  readonly sandbox?: FileSystemSandboxContext | null;
  readonly enforceManagedNetwork?: boolean;
  readonly managedNetwork?: ManagedNetwork | null;
  readonly metadata?: ProcessMetadata;
  readonly shellSnapshot?: ShellSnapshot;
  /** Executor-local network proxy (`proxy` config plus `policyDecisionTimeoutMs`), spec §6.1. */
  readonly networkProxy?: NetworkProxyLaunch;
  /**
   * Who decides this process's network policy requests while nobody watches
   * `handle.networkPolicyRequests$`: `'default'` (the client's default policy, the default) or
   * `'prompt'` (they wait, within their deadline, for the first watcher — use this when a UI
   * subscribes after the handle arrives, so no early request slips to the default).
   */
  readonly networkPolicy?: 'default' | 'prompt';
}

export function buildStartParams(options: StartProcessOptions): ParamsOf<'process/start'> {
  return {
    processId: options.processId ?? randomUUID(),
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    argv: [...options.argv],
    cwd: pathToFileUri(options.cwd),
    envPolicy: options.envPolicy ?? null,
    ...(options.shellSnapshot === undefined ? {} : { shellSnapshot: options.shellSnapshot }),
    env: { ...(options.env ?? {}) },
    tty: options.tty ?? false,
    pipeStdin: options.pipeStdin ?? false,
    arg0: options.arg0 ?? null,
    sandbox: options.sandbox ?? null,
    enforceManagedNetwork: options.enforceManagedNetwork ?? false,
    managedNetwork: options.managedNetwork ?? null,
    ...(options.networkProxy === undefined ? {} : { networkProxy: options.networkProxy }),
  };
}
