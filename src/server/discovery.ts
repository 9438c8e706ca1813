/**
 * `capabilityRoots/discoverV1` (spec §7.10; probed on 0.169.0, spec/fixtures/FINDINGS.md): for
 * each caller-chosen directory, the text of its plugin manifest (with the MCP and apps config
 * it names), of every plugin manifest below or nearest above it, and of every `SKILL.md` with
 * its `agents/openai.yaml`. Roots answer in request order, 8 at a time; at most 128.
 *
 * Per root: a bounded walk (depth 6, 2000 directories, 20000 entries, directory symlinks
 * followed once); text files of at most 1 MiB, valid UTF-8, 16 MiB in all; every file that
 * cannot be returned becomes a warning, a root that is not a directory an `error`. Sandboxed
 * roots are refused: this executor has no confinement for them (`capabilityDiscoverySandbox`
 * false). `capabilities/discoverV2` is not served. Guarded by spec/server/discovery.spec.ts
 * and spec/conformance/capabilitiesSuite.ts.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fsPath, uriFromPath } from './hostPath.js';
import { walk } from './filesystem.js';
import { sandboxPlan } from './sandbox/permissionProfile.js';
import { describeOsError } from './osError.js';
import { pathExists } from './pathProbe.js';
import { RpcFailure } from './rpcFailure.js';
import { ErrorCode } from '../protocol/errors.js';

export const MAX_CAPABILITY_ROOTS = 128;
const CONCURRENT_ROOTS = 8;
const MAX_TEXT_FILE_BYTES = 1024 * 1024;
const MAX_ROOT_TEXT_BYTES = 16 * 1024 * 1024;
/** The walk of a capability root (shared with `capabilities/discoverV2`). */
export const CAPABILITY_WALK = {
  maxDepth: 6,
  maxDirectories: 2000,
  maxEntries: 20000,
  followDirectorySymlinks: true,
  pruneHiddenDirectories: false,
};
/** Plugin manifest locations, highest priority first. */
const MANIFEST_DIRS = ['.codex-plugin', '.claude-plugin', '.cursor-plugin'];

export interface CapabilityRootParams {
  id: string;
  path: string;
  sandbox?: unknown;
}

interface TextFile {
  path: string;
  contents: string;
}

interface RootFindings {
  id: string;
  path: string;
  plugin: { manifest: TextFile; mcpConfig: TextFile | null; appsConfig: TextFile | null } | null;
  skills: { instructions: TextFile; metadata: TextFile | null }[];
  namespaceManifests: TextFile[];
  warnings: string[];
  error: string | null;
}

/** Rust's `Utf8Error` text for the first invalid sequence of `bytes`, or undefined if valid. */
export function utf8Error(bytes: Uint8Array): string | undefined {
  const n = bytes.length;
  const at = (i: number) => bytes[i] as number;
  const cont = (b: number) => b >= 0x80 && b <= 0xbf;
  let i = 0;
  while (i < n) {
    const b = at(i);
    if (b < 0x80) {
      i += 1;
      continue;
    }
    const width =
      b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    const invalid = (len: number) => `invalid utf-8 sequence of ${len} bytes from index ${i}`;
    const incomplete = `incomplete utf-8 byte sequence from index ${i}`;
    if (width === 0) return invalid(1);
    if (i + 1 >= n) return incomplete;
    const second = at(i + 1);
    const [low, high] =
      b === 0xe0
        ? [0xa0, 0xbf]
        : b === 0xed
          ? [0x80, 0x9f]
          : b === 0xf0
            ? [0x90, 0xbf]
            : b === 0xf4
              ? [0x80, 0x8f]
              : [0x80, 0xbf];
    if (second < low || second > high) return invalid(1);
    for (let k = 2; k < width; k += 1) {
      if (i + k >= n) return incomplete;
      if (!cont(at(i + k))) return invalid(k);
    }
    i += width;
  }
  return undefined;
}

/** Reads capability text files of one root within its byte budget; failures become warnings. */
class TextReader {
  private used = 0;
  private exhausted = false;

  constructor(private readonly warnings: string[]) {}

  async read(path: string): Promise<TextFile | undefined> {
    if (this.exhausted) return undefined;
    const uri = uriFromPath(path);
    let bytes: Buffer;
    try {
      const info = await stat(path);
      if (!info.isFile()) return undefined;
      if (info.size > MAX_TEXT_FILE_BYTES) {
        this.warnings.push(`capability file ${uri} exceeds the ${MAX_TEXT_FILE_BYTES}-byte limit`);
        return undefined;
      }
      bytes = await readFile(path);
    } catch (error) {
      this.warnings.push(`failed to read capability file ${uri}: ${describeOsError(error)}`);
      return undefined;
    }
    if (bytes.length > MAX_TEXT_FILE_BYTES) {
      this.warnings.push(`capability file ${uri} exceeds the ${MAX_TEXT_FILE_BYTES}-byte limit`);
      return undefined;
    }
    const bad = utf8Error(bytes);
    if (bad !== undefined) {
      this.warnings.push(`capability file ${uri} is not UTF-8: ${bad}`);
      return undefined;
    }
    if (this.used + bytes.length > MAX_ROOT_TEXT_BYTES) {
      this.exhausted = true;
      this.warnings.push(`capability root bundle exceeds the ${MAX_ROOT_TEXT_BYTES}-byte limit`);
      return undefined;
    }
    this.used += bytes.length;
    return { path: uri, contents: bytes.toString('utf8') };
  }
}

/** The highest-priority plugin manifest directly in `dir`, if any. */
async function manifestIn(dir: string): Promise<string | undefined> {
  for (const name of MANIFEST_DIRS) {
    const file = join(dir, name, 'plugin.json');
    if (await pathExists(file)) return file;
  }
  return undefined;
}

/**
 * The file a manifest field names (`./relative`, inside the plugin root); the default file when
 * the field is absent or unusable (with a warning); none for an inline object.
 */
export async function referencedConfig(
  root: string,
  manifestUri: string,
  manifest: unknown,
  field: 'mcpServers' | 'apps',
  fallback: string,
  warnings: string[],
): Promise<string | undefined> {
  const value =
    typeof manifest === 'object' && manifest !== null
      ? (manifest as Record<string, unknown>)[field]
      : undefined;
  if (typeof value === 'string') {
    if (!value.startsWith('./')) {
      warnings.push(`ignoring ${field} in ${manifestUri}: path must start with \`./\``);
      return join(root, fallback);
    }
    const target = resolve(root, value);
    const inside = relative(root, target);
    if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..') {
      warnings.push(
        `ignoring ${field} in ${manifestUri}: path must remain below the capability root`,
      );
      return join(root, fallback);
    }
    return target;
  }
  if (value !== undefined && value !== null) return undefined;
  return join(root, fallback);
}

async function discoverRoot(request: CapabilityRootParams): Promise<RootFindings> {
  const findings: RootFindings = {
    id: request.id,
    path: request.path,
    plugin: null,
    skills: [],
    namespaceManifests: [],
    warnings: [],
    error: null,
  };
  let root: string;
  try {
    root = fsPath(request.path);
  } catch (error) {
    // Only a foreign-host URI gets here (-32600 from fsPath); syntax errors failed the request.
    findings.error = `failed to inspect capability root ${request.path}: ${(error as Error).message}`;
    return findings;
  }
  try {
    if (!(await stat(root)).isDirectory()) {
      findings.error = `capability root ${request.path} is not a directory`;
      return findings;
    }
  } catch (error) {
    findings.error = `failed to inspect capability root ${request.path}: ${describeOsError(error)}`;
    return findings;
  }
  const { warnings } = findings;
  const outcome = await walk({ path: request.path, options: CAPABILITY_WALK });
  for (const failure of outcome.errors)
    warnings.push(`failed to scan capability path ${failure.path}: ${failure.message}`);
  if (outcome.truncated)
    warnings.push(`capability scan reached its traversal limit (root: ${request.path})`);
  const text = new TextReader(warnings);

  const rootManifest = await manifestIn(root);
  if (rootManifest) {
    const manifest = await text.read(rootManifest);
    if (manifest) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(manifest.contents);
      } catch {
        parsed = undefined;
      }
      const config = async (field: 'mcpServers' | 'apps', fallback: string) => {
        if (parsed === undefined) return null;
        const file = await referencedConfig(root, manifest.path, parsed, field, fallback, warnings);
        return file !== undefined && (await pathExists(file))
          ? ((await text.read(file)) ?? null)
          : null;
      };
      findings.plugin = {
        manifest,
        mcpConfig: await config('mcpServers', '.mcp.json'),
        appsConfig: await config('apps', '.app.json'),
      };
    }
  } else {
    // The nearest enclosing plugin names this root's namespace.
    for (let dir = dirname(root); ; dir = dirname(dir)) {
      const found = await manifestIn(dir);
      if (found) {
        const manifest = await text.read(found);
        if (manifest) findings.namespaceManifests.push(manifest);
        break;
      }
      if (dirname(dir) === dir) break;
    }
  }

  // Plugin roots met by the walk (the root's own included), each by its best manifest.
  const pluginDirs: string[] = rootManifest ? [root] : [];
  const skillFiles: string[] = [];
  for (const entry of outcome.entries) {
    if (entry.kind !== 'file') continue;
    const path = fsPath(entry.path);
    const name = basename(path);
    if (name === 'SKILL.md') skillFiles.push(entry.path);
    if (name === 'plugin.json' && MANIFEST_DIRS.includes(basename(dirname(path)))) {
      const pluginDir = dirname(dirname(path));
      if (!pluginDirs.includes(pluginDir)) pluginDirs.push(pluginDir);
    }
  }
  for (const dir of pluginDirs) {
    const found = dir === root ? rootManifest : await manifestIn(dir);
    if (!found) continue;
    const manifest = await text.read(found);
    if (manifest) findings.namespaceManifests.push(manifest);
  }

  for (const uri of skillFiles.sort()) {
    const path = fsPath(uri);
    const instructions = await text.read(path);
    if (!instructions) continue;
    const metadataFile = join(dirname(path), 'agents', 'openai.yaml');
    const metadata = (await pathExists(metadataFile)) ? await text.read(metadataFile) : undefined;
    findings.skills.push({ instructions, metadata: metadata ?? null });
  }
  return findings;
}

export async function discoverCapabilityRoots(params: {
  roots: CapabilityRootParams[];
}): Promise<{ roots: RootFindings[] }> {
  if (params.roots.length > MAX_CAPABILITY_ROOTS) {
    throw RpcFailure.invalidRequest(
      `capability root discovery accepts at most ${MAX_CAPABILITY_ROOTS} roots`,
    );
  }
  for (const root of params.roots) {
    try {
      fsPath(root.path);
    } catch (error) {
      // A path of another OS is that root's own error (below); a malformed URI fails the call.
      if (!(error instanceof RpcFailure && error.code === ErrorCode.invalidRequest)) throw error;
    }
    // Discovery under a confining sandbox is not implemented (DIVERGENCES: capabilityDiscoverySandbox).
    if (sandboxPlan(root.sandbox, process.cwd()).kind === 'confined') {
      throw RpcFailure.invalidRequest('sandbox intent cannot be enforced on this executor');
    }
  }
  const results: RootFindings[] = new Array(params.roots.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < params.roots.length) {
      const index = next;
      next += 1;
      results[index] = await discoverRoot(params.roots[index] as CapabilityRootParams);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENT_ROOTS, params.roots.length) }, worker),
  );
  return { roots: results };
}
