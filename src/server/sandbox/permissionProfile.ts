/**
 * The managed permission profile a request's `sandbox` context carries (codex 0.169.0,
 * `FileSystemSandboxContext`), decoded and resolved against the host: special paths become
 * absolute paths, and the result says what the request may read and write.
 *
 * Decoding follows the binary's answers (spec/fixtures/FINDINGS.md, "Sandboxes"):
 * `permissions` and `windowsSandboxLevel` are required, path entries are `file:` URIs,
 * `missing_path_behavior` knows only `skip`. Resolution follows codex's
 * `FileSystemSandboxPolicy`: the most specific entry covering a path decides its access,
 * equally specific entries rank deny > write > read, and no entry means deny.
 * Guarded by spec/server/sandbox/permissionProfile.spec.ts.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { describeValue } from '../params.js';
import { pathFromUri } from '../hostPath.js';
import { PathUriError } from '../../protocol/pathUri.js';
import { RpcFailure } from '../rpcFailure.js';

export type AccessMode = 'read' | 'write' | 'deny';

/** One file-system entry with its path made absolute. */
export interface ResolvedEntry {
  readonly path: string;
  readonly access: AccessMode;
  /** `root` (the whole file system) is kept apart: it decides the base of the view. */
  readonly root: boolean;
  /** A `project_roots` entry with a subpath: its last component is a protected name. */
  readonly projectSubpath: string | null;
}

export type FileSystemPolicy =
  | { readonly kind: 'unrestricted' }
  | { readonly kind: 'restricted'; readonly entries: readonly ResolvedEntry[] };

export type NetworkPolicy = 'restricted' | 'enabled';

/** What a request's `sandbox` asks for. */
export type SandboxPlan =
  /** `sandbox` null or absent: run as the executor runs. */
  | { readonly kind: 'none' }
  /** A context whose profile confines nothing (disabled, external, or full access). */
  | { readonly kind: 'unconfined' }
  | {
      readonly kind: 'confined';
      readonly fileSystem: FileSystemPolicy;
      readonly network: NetworkPolicy;
    };

/** Where special paths point: the request's cwd and workspace roots, and `$TMPDIR`. */
export interface ResolutionBase {
  readonly cwd: string;
  readonly tmpdir: string | undefined;
}

const PROFILE_TYPES = ['managed', 'disabled', 'external'] as const;
const FILE_SYSTEM_KINDS = ['restricted', 'unrestricted', 'external_sandbox'] as const;
const ACCESS_MODES = ['read', 'write', 'deny', 'none'] as const;
const NETWORK_POLICIES = ['restricted', 'enabled'] as const;

function invalid(message: string): never {
  throw RpcFailure.invalidParams(message);
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    invalid(`invalid type: ${describeValue(value)}, expected ${what}`);
  }
  return value as Record<string, unknown>;
}

function variant<T extends string>(value: unknown, options: readonly T[]): T {
  if (typeof value !== 'string') {
    invalid(`invalid type: ${describeValue(value)}, expected a string`);
  }
  if (!(options as readonly string[]).includes(value)) {
    const expected = options.map((option) => `\`${option}\``);
    invalid(
      `unknown variant \`${value}\`, expected ${expected.length === 1 ? expected[0] : `one of ${expected.join(', ')}`}`,
    );
  }
  return value as T;
}

function required(object: Record<string, unknown>, key: string): unknown {
  const value = object[key];
  if (value === undefined) invalid(`missing field \`${key}\``);
  return value;
}

function uriPath(uri: unknown): string {
  if (typeof uri !== 'string') invalid(`invalid type: ${describeValue(uri)}, expected a string`);
  try {
    return pathFromUri(uri);
  } catch (error) {
    if (error instanceof PathUriError) invalid(error.message);
    throw error;
  }
}

/** The absolute paths a `path` value of an entry names (several for `project_roots`). */
function entryPaths(
  path: Record<string, unknown>,
  workspaceRoots: readonly string[],
  base: ResolutionBase,
): { paths: string[]; root: boolean; projectSubpath: string | null } {
  const type = variant(required(path, 'type'), ['path', 'glob_pattern', 'special'] as const);
  if (type === 'path')
    return { paths: [uriPath(required(path, 'path'))], root: false, projectSubpath: null };
  if (type === 'glob_pattern') {
    // Fail closed: a deny pattern this executor cannot apply must not be dropped.
    invalid("glob_pattern entries are not supported by this executor's sandbox");
  }
  const value = record(required(path, 'value'), 'internally tagged enum FileSystemSpecialPath');
  const kind = required(value, 'kind');
  if (typeof kind !== 'string') invalid(`invalid type: ${describeValue(kind)}, expected a string`);
  const subpath = value.subpath;
  if (subpath !== undefined && subpath !== null && typeof subpath !== 'string') {
    invalid(`invalid type: ${describeValue(subpath)}, expected a string`);
  }
  switch (kind) {
    case 'root':
      return { paths: ['/'], root: true, projectSubpath: null };
    case 'project_roots':
    case 'current_working_directory': {
      const paths = workspaceRoots.map((root) =>
        typeof subpath === 'string' ? (isAbsolute(subpath) ? subpath : join(root, subpath)) : root,
      );
      return { paths, root: false, projectSubpath: typeof subpath === 'string' ? subpath : null };
    }
    case 'slash_tmp':
      return { paths: ['/tmp'], root: false, projectSubpath: null };
    case 'tmpdir':
      return {
        paths: base.tmpdir !== undefined && isAbsolute(base.tmpdir) ? [base.tmpdir] : [],
        root: false,
        projectSubpath: null,
      };
    default:
      // `minimal` (platform defaults) and unknown kinds: codex warns and ignores them.
      return { paths: [], root: false, projectSubpath: null };
  }
}

function resolveEntries(
  rawEntries: unknown,
  workspaceRoots: readonly string[],
  base: ResolutionBase,
): ResolvedEntry[] {
  if (rawEntries === undefined || rawEntries === null) return [];
  if (!Array.isArray(rawEntries)) {
    invalid(`invalid type: ${describeValue(rawEntries)}, expected a sequence`);
  }
  const entries: ResolvedEntry[] = [];
  for (const raw of rawEntries) {
    const entry = record(raw, 'struct FileSystemSandboxEntry');
    const accessName = variant(required(entry, 'access'), ACCESS_MODES);
    const access: AccessMode = accessName === 'none' ? 'deny' : accessName;
    const missing = entry.missing_path_behavior;
    if (missing !== undefined && missing !== null) variant(missing, ['skip'] as const);
    const { paths, root, projectSubpath } = entryPaths(
      record(required(entry, 'path'), 'internally tagged enum FileSystemPath'),
      workspaceRoots,
      base,
    );
    for (const path of paths) entries.push({ path: resolve(path), access, root, projectSubpath });
  }
  return entries;
}

/**
 * Decodes a request's `sandbox` value. `fallbackCwd` is used when the context names no cwd.
 * Throws `RpcFailure` (-32602) with the binary's serde wording for a malformed context.
 */
export function sandboxPlan(sandbox: unknown, fallbackCwd: string, tmpdir?: string): SandboxPlan {
  if (sandbox === null || sandbox === undefined) return { kind: 'none' };
  const context = record(sandbox, 'struct FileSystemSandboxContext');
  const permissions = record(
    required(context, 'permissions'),
    'internally tagged enum PermissionProfile',
  );
  required(context, 'windowsSandboxLevel');
  const cwd =
    context.cwd === undefined || context.cwd === null ? fallbackCwd : uriPath(context.cwd);
  const roots = context.workspaceRoots;
  let workspaceRoots: string[] = [cwd];
  if (roots !== undefined && roots !== null) {
    if (!Array.isArray(roots))
      invalid(`invalid type: ${describeValue(roots)}, expected a sequence`);
    workspaceRoots = roots.map(uriPath);
  }
  const type = variant(required(permissions, 'type'), PROFILE_TYPES);
  if (type !== 'managed') return { kind: 'unconfined' };
  const network =
    permissions.network === undefined || permissions.network === null
      ? 'restricted'
      : variant(permissions.network, NETWORK_POLICIES);
  const rawFileSystem = record(required(permissions, 'file_system'), 'internally tagged enum');
  const fsKind = variant(required(rawFileSystem, 'type'), FILE_SYSTEM_KINDS);
  const fileSystem: FileSystemPolicy =
    fsKind === 'restricted'
      ? {
          kind: 'restricted',
          entries: resolveEntries(rawFileSystem.entries, workspaceRoots, {
            cwd,
            tmpdir: tmpdir ?? process.env.TMPDIR,
          }),
        }
      : { kind: 'unrestricted' };
  if (hasFullDiskWrite(fileSystem) && network === 'enabled') return { kind: 'unconfined' };
  return { kind: 'confined', fileSystem, network };
}

/** True iff `path` is `ancestor` or lies below it (both absolute and normalised). */
export function isWithin(path: string, ancestor: string): boolean {
  if (ancestor === '/') return true;
  return path === ancestor || path.startsWith(`${ancestor}/`);
}

const ACCESS_RANK: Record<AccessMode, number> = { read: 0, write: 1, deny: 2 };

/** The entry that decides the access at `path` (absolute, normalised): the most specific one. */
export function governingEntry(
  policy: Extract<FileSystemPolicy, { kind: 'restricted' }>,
  path: string,
): ResolvedEntry | undefined {
  let best: ResolvedEntry | undefined;
  for (const entry of policy.entries) {
    if (!isWithin(path, entry.path)) continue;
    if (
      best === undefined ||
      entry.path.length > best.path.length ||
      (entry.path.length === best.path.length &&
        ACCESS_RANK[entry.access] > ACCESS_RANK[best.access])
    ) {
      best = entry;
    }
  }
  return best;
}

/** The access the policy grants at `path`; no entry covering it means deny. */
export function accessAt(policy: FileSystemPolicy, path: string): AccessMode {
  if (policy.kind === 'unrestricted') return 'write';
  return governingEntry(policy, path)?.access ?? 'deny';
}

/** Whole-disk write with nothing narrowing it (codex's `has_full_disk_write_access`). */
export function hasFullDiskWrite(policy: FileSystemPolicy): boolean {
  if (policy.kind === 'unrestricted') return true;
  const rootWrite = policy.entries.some((entry) => entry.root && entry.access === 'write');
  if (!rootWrite) return false;
  return !policy.entries.some(
    (entry) =>
      entry.access !== 'write' &&
      !(entry.root && entry.access === 'read') &&
      accessAt(policy, entry.path) !== 'write',
  );
}

/** Whether the whole file system is readable as the base of the view. */
export function hasRootRead(policy: FileSystemPolicy): boolean {
  if (policy.kind === 'unrestricted') return true;
  return policy.entries.some((entry) => entry.root && entry.access !== 'deny');
}
