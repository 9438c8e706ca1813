/**
 * Starting a confined process: the bubblewrap binary (found once, checked once by running
 * it with every namespace the sandbox uses), the command line that wraps the request's argv,
 * and the mount points bwrap leaves on the host, removed when the last process using them
 * has ended. Anything that keeps a sandbox from being applied is an error: the request is
 * refused, never run unconfined.
 *
 * Settings are executor-wide (`configureSandbox`, from `execrx serve --bwrap` and
 * `--linux-sandbox-pid-namespace`). Guarded by spec/server/sandbox/launcher.spec.ts.
 */
import { execFile } from 'node:child_process';
import {
  accessSync,
  constants,
  mkdtempSync,
  openSync,
  rmSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { RpcFailure } from '../rpcFailure.js';
import {
  bwrapArguments,
  hostProbe,
  type PathProbe,
  type PidNamespaceMode,
} from './bwrapArguments.js';
import type { NetworkPolicy, SandboxPlan } from './permissionProfile.js';
import { networkSeccompFilter } from './seccompFilter.js';

export interface SandboxSettings {
  /** The bwrap binary; by default `bwrap` on the executor's PATH. */
  readonly bwrapPath: string | undefined;
  /** `isolate` (the binary's default): a PID namespace per process; `inherit`: none. */
  readonly pidNamespace: PidNamespaceMode;
}

let settings: SandboxSettings = { bwrapPath: undefined, pidNamespace: 'isolate' };
let verified: Promise<string> | undefined;

/** Changes the executor-wide settings (before serving); forgets an earlier bwrap check. */
export function configureSandbox(next: Partial<SandboxSettings>): void {
  settings = { ...settings, ...next };
  verified = undefined;
}

const UNENFORCEABLE = 'sandbox intent cannot be enforced on this executor';
const CHECK_TIMEOUT_MS = 10_000;

function findOnPath(program: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}

function trueProgram(): string {
  return findOnPath('true') ?? '/bin/true';
}

let filterFile: string | undefined;

/**
 * Where a child opens the network seccomp program: `/proc/<executor>/fd/<n>`, a descriptor
 * the executor keeps open on a file it already deleted, so nothing stays on disk and nobody
 * can swap the program underneath.
 */
function seccompFilterFile(): string | undefined {
  if (filterFile !== undefined) return filterFile;
  const filter = networkSeccompFilter();
  if (filter === undefined) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'execrx-seccomp-'));
  try {
    const path = join(dir, 'network.bpf');
    writeFileSync(path, filter, { mode: 0o400 });
    const fd = openSync(path, 'r');
    filterFile = `/proc/${process.pid}/fd/${fd}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return filterFile;
}

/**
 * The command line that runs `command` in bwrap with `args`. With restricted network the
 * seccomp program goes in on fd 3, opened by a `sh` that then becomes bwrap (`exec`), so pipe
 * and terminal starts alike can hand it over.
 */
function bwrapCommandLine(
  bwrap: string,
  args: readonly string[],
  network: NetworkPolicy,
  command: readonly string[],
): string[] {
  const filter = network === 'restricted' ? seccompFilterFile() : undefined;
  if (filter === undefined) return [bwrap, ...args, '--', ...command];
  return [
    '/bin/sh',
    '-c',
    'exec 3<"$0" && exec "$@"',
    filter,
    bwrap,
    ...args,
    '--seccomp',
    '3',
    '--',
    ...command,
  ];
}

/** Runs bwrap once with the sandbox's namespaces; resolves with its path. */
function verifyBwrap(): Promise<string> {
  const path = settings.bwrapPath ?? findOnPath('bwrap');
  if (path === undefined) {
    return Promise.reject(
      new Error('bubblewrap (bwrap) was not found on PATH; install it or pass --bwrap PATH'),
    );
  }
  const { args } = bwrapArguments(
    {
      kind: 'restricted',
      entries: [{ path: '/', access: 'read', root: true, projectSubpath: null }],
    },
    'restricted',
    settings.pidNamespace,
  );
  const [program, ...rest] = bwrapCommandLine(path, args, 'restricted', [trueProgram()]);
  return new Promise((resolve, reject) => {
    execFile(
      program as string,
      rest,
      { timeout: CHECK_TIMEOUT_MS, encoding: 'utf8' },
      (error, _stdout, stderr) => {
        if (error === null) resolve(path);
        else {
          const detail = stderr.trim() || error.message;
          reject(new Error(`bubblewrap at ${path} cannot set up the sandbox: ${detail}`));
        }
      },
    );
  });
}

/** The checked bwrap path; a failed check is retried by the next request. */
async function readyBwrap(): Promise<string> {
  verified ??= verifyBwrap();
  try {
    return await verified;
  } catch (error) {
    verified = undefined;
    throw RpcFailure.invalidParams(`${UNENFORCEABLE}: ${(error as Error).message}`);
  }
}

/** Mount points bwrap created on the host, by how many live processes rely on them. */
const syntheticTargets = new Map<string, number>();

/** Treats live synthetic targets as missing, so a second process masks (and counts) them too. */
const probeSeeingSynthetic: PathProbe = {
  kind: (path) => (syntheticTargets.has(path) ? 'missing' : hostProbe.kind(path)),
  real: (path) => hostProbe.real(path),
};

export interface ConfinedCommand {
  /** `bwrap …args -- program …rest`. */
  readonly argv: readonly string[];
  /** Call once after the process has ended: removes mount points nobody uses any more. */
  release(): void;
}

/**
 * Wraps `argv` (its program being `program`) in bubblewrap for a confined plan. Rejects with
 * -32602 when bwrap is missing or cannot set up its namespaces.
 */
export async function confineCommand(
  plan: Extract<SandboxPlan, { kind: 'confined' }>,
  program: string,
  rest: readonly string[],
  tty: boolean,
): Promise<ConfinedCommand> {
  const bwrap = await readyBwrap();
  // Without a PID namespace nothing else ends a pipe process's background children when it
  // is terminated: they stay in bwrap's process group (spec/server/sandbox/launcher.spec.ts).
  const newSession = tty || settings.pidNamespace === 'isolate';
  const invocation = bwrapArguments(
    plan.fileSystem,
    plan.network,
    settings.pidNamespace,
    probeSeeingSynthetic,
    newSession,
  );
  for (const target of invocation.syntheticTargets) {
    syntheticTargets.set(target, (syntheticTargets.get(target) ?? 0) + 1);
  }
  let released = false;
  return {
    argv: bwrapCommandLine(bwrap, invocation.args, plan.network, [program, ...rest]),
    release: () => {
      if (released) return;
      released = true;
      for (const target of invocation.syntheticTargets) {
        const users = (syntheticTargets.get(target) ?? 1) - 1;
        if (users > 0) {
          syntheticTargets.set(target, users);
          continue;
        }
        syntheticTargets.delete(target);
        try {
          rmdirSync(target); // only an empty directory goes
        } catch {
          // already gone, or not empty: not ours to remove
        }
      }
    },
  };
}
