/**
 * The sandbox check of the `fs/*` methods. The binary runs a sandboxed request's file
 * operation inside the same bubblewrap view as a process; this executor decides in-process
 * from the same mount plan (`writableRoots`), so both answer alike: a write outside the
 * writable roots, or into a read-only carve-out, fails `-32603 Read-only file system (os
 * error 30)`; a read of a denied path fails `-32600 Permission denied (os error 13)`.
 * Symlinks are resolved first, as the kernel would resolve them in the view.
 * Guarded by spec/server/sandbox/fileSystemAccess.spec.ts and the sandbox conformance suite.
 */
import { basename, dirname, join } from 'node:path';
import { RpcFailure } from '../rpcFailure.js';
import { hostProbe, writableRoots, type PathProbe } from './bwrapArguments.js';
import {
  governingEntry,
  hasFullDiskWrite,
  isWithin,
  sandboxPlan,
  type FileSystemPolicy,
} from './permissionProfile.js';

export type FileAccess = 'read' | 'write';

const READ_ONLY = (): RpcFailure => RpcFailure.internal('Read-only file system (os error 30)');
const DENIED = (): RpcFailure => RpcFailure.invalidRequest('Permission denied (os error 13)');

/** `path` with symlinks resolved in its existing part; a final symlink only when `followFinal`. */
function effectivePath(path: string, followFinal: boolean, probe: PathProbe): string {
  if (!followFinal) {
    const parent = dirname(path);
    return parent === path ? path : join(effectivePath(parent, true, probe), basename(path));
  }
  let existing = path;
  const rest: string[] = [];
  while (existing !== '/' && probe.kind(existing) === 'missing') {
    rest.unshift(basename(existing));
    existing = dirname(existing);
  }
  return join(probe.real(existing), ...rest);
}

/** Throws the binary's error when `policy` does not allow `access` at `path`. */
export function checkAccess(
  policy: FileSystemPolicy,
  path: string,
  access: FileAccess,
  followFinal = true,
  probe: PathProbe = hostProbe,
): void {
  const target = effectivePath(path, followFinal, probe);
  if (policy.kind === 'unrestricted') return;
  const entry = governingEntry(policy, target);
  if (entry?.access === 'deny') throw DENIED();
  if (access === 'read') {
    // Outside every readable entry the view has nothing (a tmpfs root): as for a deny.
    if (entry === undefined) throw DENIED();
    return;
  }
  if (hasFullDiskWrite(policy)) return;
  const roots = writableRoots(policy, probe).filter(({ root }) => isWithin(target, root));
  const innermost = roots[roots.length - 1];
  if (innermost === undefined) throw READ_ONLY();
  if (innermost.denied.some((denied) => isWithin(target, denied))) throw DENIED();
  if (innermost.carveOuts.some((carveOut) => isWithin(target, carveOut))) throw READ_ONLY();
}

/**
 * The check every `fs/*` handler runs first: nothing for `sandbox: null` (the common case,
 * decided without decoding) or an unconfined profile; otherwise `checkAccess`.
 */
export function enforceFileSandbox(
  sandbox: unknown,
  path: string,
  access: FileAccess,
  followFinal = true,
): void {
  const policy = confinedPolicy(sandbox);
  if (policy !== undefined) checkAccess(policy, path, access, followFinal);
}

function confinedPolicy(sandbox: unknown): FileSystemPolicy | undefined {
  if (sandbox === null || sandbox === undefined) return undefined;
  const plan = sandboxPlan(sandbox, process.cwd());
  return plan.kind === 'confined' ? plan.fileSystem : undefined;
}

/**
 * For `fs/walk`: which directories it must not read (a denied one is reported as an error
 * entry, `Permission denied (os error 13)`, and not descended into, as in the binary's view).
 * Undefined when nothing is denied.
 */
export function fileReadDenial(sandbox: unknown): ((path: string) => boolean) | undefined {
  const policy = confinedPolicy(sandbox);
  if (policy?.kind !== 'restricted') return undefined;
  return (path) => governingEntry(policy, effectivePath(path, true, hostProbe))?.access === 'deny';
}

/** For a recursive `fs/copy` source: refused (EACCES) when a denied path lies inside it. */
export function enforceTreeReadable(sandbox: unknown, path: string): void {
  const policy = confinedPolicy(sandbox);
  if (policy?.kind !== 'restricted') return;
  const root = effectivePath(path, false, hostProbe);
  if (policy.entries.some((entry) => entry.access === 'deny' && isWithin(entry.path, root))) {
    throw DENIED();
  }
}
