/**
 * The bubblewrap command line for a confined plan, laid out as codex 0.169.0 lays out its own
 * (observed with `ps`, see spec/fixtures/FINDINGS.md "Sandboxes"):
 *
 *   --new-session --die-with-parent               (--new-session: see `newSession` below)
 *   --ro-bind / / --dev /dev                      the whole disk read-only
 *   masks of denied paths outside writable roots
 *   per writable root (sorted, so a parent comes before a child root):
 *     --bind R R, then its read-only carve-outs and denied paths
 *   --unshare-user [--unshare-pid] --unshare-ipc [--unshare-net] [--proc /proc] --cap-drop ALL
 *
 * A carve-out that exists is bound read-only; a missing one gets an empty read-only tmpfs on
 * its first missing component (so the process cannot create it), and bwrap creates that
 * mount point on the host: those paths are returned as `syntheticTargets` for the caller to
 * remove afterwards. A symlink on the way to a carve-out, inside the writable root, gets
 * /dev/null bound over it so it cannot be re-pointed.
 * Guarded by spec/server/sandbox/bwrapArguments.spec.ts.
 */
import { lstatSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  accessAt,
  hasFullDiskWrite,
  hasRootRead,
  isWithin,
  type FileSystemPolicy,
  type NetworkPolicy,
} from './permissionProfile.js';

export type PidNamespaceMode = 'isolate' | 'inherit';

/** What is at a host path (without following a final symlink). */
export type PathKind = 'missing' | 'file' | 'directory' | 'symlink';

export interface PathProbe {
  kind(path: string): PathKind;
  /** The path with every symlink resolved; the path itself when that fails. */
  real(path: string): string;
}

export const hostProbe: PathProbe = {
  kind(path) {
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return 'symlink';
      return stat.isDirectory() ? 'directory' : 'file';
    } catch {
      return 'missing';
    }
  },
  real(path) {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  },
};

/** Names kept read-only under every writable root (codex's protected metadata names). */
const PROTECTED_NAMES = ['.git', '.agents', '.codex'] as const;

export interface WritableRoot {
  readonly root: string;
  /** Read-only paths under `root`, sorted. */
  readonly carveOuts: readonly string[];
  /** Denied paths under `root`, sorted. */
  readonly denied: readonly string[];
}

function sortedUnique(paths: Iterable<string>): string[] {
  return [...new Set(paths)].sort();
}

/** Writable roots (existing ones only, as the binary skips missing ones) with their carve-outs. */
export function writableRoots(
  policy: FileSystemPolicy,
  probe: PathProbe = hostProbe,
): WritableRoot[] {
  if (policy.kind === 'unrestricted' || hasFullDiskWrite(policy)) return [];
  const { entries } = policy;
  const names = new Set<string>(PROTECTED_NAMES);
  for (const entry of entries) {
    const subpath = entry.projectSubpath;
    if (subpath !== null && entry.access !== 'write' && !subpath.includes('/')) names.add(subpath);
  }
  const roots = sortedUnique(
    entries
      .filter((entry) => entry.access === 'write' && accessAt(policy, entry.path) === 'write')
      .filter((entry) => probe.kind(entry.path) !== 'missing')
      .map((entry) => probe.real(entry.path)),
  );
  const explicitWrite = new Set(entries.filter((e) => e.access === 'write').map((e) => e.path));
  return roots.map((root) => {
    const carveOuts = [...names]
      .map((name) => join(root, name))
      .filter((path) => !explicitWrite.has(path));
    const denied: string[] = [];
    for (const entry of entries) {
      if (entry.path === root || !isWithin(entry.path, root)) continue;
      const access = accessAt(policy, entry.path);
      if (access === 'read') carveOuts.push(entry.path);
      else if (access === 'deny') denied.push(entry.path);
    }
    return { root, carveOuts: sortedUnique(carveOuts), denied: sortedUnique(denied) };
  });
}

/** The first symlink on the way from `root` (exclusive) to `path`, if any. */
function symlinkOnTheWay(path: string, root: string, probe: PathProbe): string | undefined {
  const components = path
    .slice(root.length)
    .split('/')
    .filter((part) => part !== '');
  let current = root;
  for (const part of components) {
    current = join(current, part);
    const kind = probe.kind(current);
    if (kind === 'symlink') return current;
    if (kind === 'missing') return undefined;
  }
  return undefined;
}

/** The first component of `path` below `root` that does not exist. */
function firstMissing(path: string, root: string, probe: PathProbe): string {
  let current = path;
  while (dirname(current) !== root && probe.kind(dirname(current)) === 'missing') {
    current = dirname(current);
  }
  return current;
}

export interface BwrapInvocation {
  /** Everything between `bwrap` and `--`. */
  readonly args: readonly string[];
  /** Mount points bwrap creates on the host for missing carve-outs. */
  readonly syntheticTargets: readonly string[];
}

function maskDenied(path: string, probe: PathProbe, args: string[]): void {
  const kind = probe.kind(path);
  if (kind === 'missing') return;
  if (kind === 'directory') args.push('--perms', '000', '--tmpfs', path, '--remount-ro', path);
  else args.push('--ro-bind', '/dev/null', path);
}

/**
 * The bwrap arguments that confine a process to `fileSystem` and `network`. `newSession`
 * (`--new-session`, a session of its own, so the command cannot push input into a terminal
 * it inherited) is what the binary always uses; the launcher leaves it out only for a pipe
 * process without a PID namespace, which has no terminal to protect and whose background
 * children must stay in the process group that `process/terminate` kills.
 */
export function bwrapArguments(
  fileSystem: FileSystemPolicy,
  network: NetworkPolicy,
  pidNamespace: PidNamespaceMode,
  probe: PathProbe = hostProbe,
  newSession = true,
): BwrapInvocation {
  const args = newSession ? ['--new-session', '--die-with-parent'] : ['--die-with-parent'];
  const syntheticTargets: string[] = [];
  if (hasFullDiskWrite(fileSystem)) {
    args.push('--bind', '/', '/', '--dev', '/dev');
  } else {
    const policy = fileSystem as Extract<FileSystemPolicy, { kind: 'restricted' }>;
    if (hasRootRead(policy)) {
      args.push('--ro-bind', '/', '/');
    } else {
      args.push('--tmpfs', '/');
      const readable = policy.entries.filter(
        (entry) => entry.access === 'read' && accessAt(policy, entry.path) === 'read',
      );
      for (const path of sortedUnique(readable.map((entry) => entry.path))) {
        if (probe.kind(path) !== 'missing') args.push('--ro-bind', path, path);
      }
    }
    args.push('--dev', '/dev');
    const roots = writableRoots(policy, probe);
    const underRoot = (path: string): boolean => roots.some(({ root }) => isWithin(path, root));
    const topDenied = policy.entries
      .filter((entry) => entry.access === 'deny' && !entry.root && !underRoot(entry.path))
      .map((entry) => entry.path);
    for (const path of sortedUnique(topDenied)) maskDenied(path, probe, args);
    for (const { root, carveOuts, denied } of roots) {
      args.push('--bind', root, root);
      for (const carveOut of carveOuts) {
        const symlink = symlinkOnTheWay(carveOut, root, probe);
        if (symlink !== undefined) {
          args.push('--ro-bind', '/dev/null', symlink);
        } else if (probe.kind(carveOut) !== 'missing') {
          args.push('--ro-bind', carveOut, carveOut);
        } else {
          const target = firstMissing(carveOut, root, probe);
          args.push('--perms', '555', '--tmpfs', target, '--remount-ro', target);
          syntheticTargets.push(target);
        }
      }
      for (const path of denied) maskDenied(path, probe, args);
    }
  }
  args.push('--unshare-user');
  if (pidNamespace === 'isolate') args.push('--unshare-pid');
  args.push('--unshare-ipc');
  if (network === 'restricted') args.push('--unshare-net');
  if (pidNamespace === 'isolate') args.push('--proc', '/proc');
  args.push('--cap-drop', 'ALL');
  return { args, syntheticTargets: sortedUnique(syntheticTargets) };
}
