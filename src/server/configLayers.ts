/**
 * The executor-local configuration and requirements layers that `environmentConfig/read`
 * returns, as codex 0.169.0 finds them (probed; spec/fixtures/FINDINGS.md):
 *
 * config, lowest precedence first: `system (<systemDir>/config.toml)`, `user (<CODEX_HOME>/config.toml)`,
 * one `project (<dir>/.codex/config.toml)` per trusted directory from the project root down to
 * `cwd`, then `legacy managed_config.toml (<systemDir>/managed_config.toml)`; cloud layers would
 * follow the system layer (`cloudInsertionIndex` 1 before projection).
 * requirements: `<systemDir>/requirements.toml`, then the legacy managed file read as
 * requirements (`allowed_approval_policies`, `allowed_approvals_reviewers`, `allowed_sandbox_modes`).
 *
 * Layers are raw TOML (relative paths are not resolved). A missing file is an empty layer; an
 * unreadable or unparsable one fails the whole read. Guarded by spec/server/environmentConfig.spec.ts.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join, parse as parsePath, resolve } from 'node:path';
import { describeOsError } from './osError.js';
import { isDirectory, pathExists } from './pathProbe.js';
import { isTable, parseToml, TomlSyntaxError, type TomlTable, type TomlValue } from './tomlText.js';

export interface ConfigLocations {
  /** `$CODEX_HOME` (or `~/.codex`), canonical. */
  readonly codexHome: string;
  /** `/etc/codex` on Unix. */
  readonly systemDir: string;
}

export interface LocalLayer {
  readonly source: string;
  readonly baseDir: string;
  readonly toml: TomlTable;
}

export interface LayerStack {
  readonly layers: LocalLayer[];
  readonly cloudInsertionIndex: number;
}

/** Keys a repository's own `.codex/config.toml` may not set (they are dropped). */
const PROJECT_LOCAL_DENYLIST = [
  'openai_base_url',
  'chatgpt_base_url',
  'apps_mcp_product_sku',
  'model_provider',
  'model_providers',
  'notify',
  'profile',
  'profiles',
  'experimental_realtime_webrtc_call_base_url',
  'experimental_realtime_ws_base_url',
  'otel',
];

/** A config file's parsed table; undefined when it does not exist. Throws with the file named. */
async function readTomlFile(file: string): Promise<TomlTable | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Failed to read config file ${file}: ${describeOsError(error)}`);
  }
  try {
    return parseToml(text);
  } catch (error) {
    if (error instanceof TomlSyntaxError) throw new Error(`${file}:${error.message}`);
    throw error;
  }
}

/** A project-root marker is present; a `.git` directory counts only with a `HEAD` in it. */
async function markerPresent(dir: string, marker: string): Promise<boolean> {
  const path = join(dir, marker);
  if (marker === '.git' && (await isDirectory(path))) return pathExists(join(path, 'HEAD'));
  return pathExists(path);
}

function ancestors(path: string): string[] {
  const out = [path];
  let current = path;
  while (dirname(current) !== current) {
    current = dirname(current);
    out.push(current);
  }
  return out;
}

/** Overlays `overlay` onto `base`: tables merge key by key, anything else replaces. */
function mergeToml(base: TomlTable, overlay: TomlTable): TomlTable {
  const merged: TomlTable = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const current = merged[key];
    merged[key] = isTable(current) && isTable(value) ? mergeToml(current, value) : value;
  }
  return merged;
}

async function canonicalOr(path: string): Promise<string> {
  return realpath(path).catch(() => path);
}

/** Lookup keys of a directory in `[projects]`: canonical path first, then the path as given. */
async function trustKeys(path: string): Promise<string[]> {
  const canonical = await canonicalOr(path);
  return canonical === path ? [canonical] : [canonical, path];
}

/** The repository a checkout belongs to: a linked worktree's `.git` file names the main one. */
async function repositoryRoot(cwd: string): Promise<string | undefined> {
  const base = (await isDirectory(cwd)) ? cwd : dirname(cwd);
  for (const dir of ancestors(base)) {
    const dotGit = join(dir, '.git');
    const info = await stat(dotGit).catch(() => undefined);
    if (!info) continue;
    if (info.isDirectory()) return dir;
    const text = await readFile(dotGit, 'utf8').catch(() => '');
    const gitDir = /^gitdir:\s*(.+)$/m.exec(text)?.[1]?.trim();
    const worktrees = gitDir ? resolve(dir, gitDir) : undefined;
    if (worktrees && parsePath(dirname(worktrees)).base === 'worktrees')
      return dirname(dirname(dirname(worktrees)));
    return dir;
  }
  return undefined;
}

type TrustLevel = 'trusted' | 'untrusted';

function projectTrust(config: TomlTable): Map<string, TrustLevel> {
  const trust = new Map<string, TrustLevel>();
  const projects = config.projects;
  if (!isTable(projects)) return trust;
  for (const [key, project] of Object.entries(projects)) {
    const level = isTable(project) ? project.trust_level : undefined;
    if (level === 'trusted' || level === 'untrusted') trust.set(key, level);
  }
  return trust;
}

async function projectRoot(cwd: string, markers: string[]): Promise<string> {
  if (markers.length === 0) return cwd;
  for (const dir of ancestors(cwd)) {
    for (const marker of markers) if (await markerPresent(dir, marker)) return dir;
  }
  return cwd;
}

function rootMarkers(config: TomlTable): string[] {
  const markers = config.project_root_markers;
  if (Array.isArray(markers) && markers.every((m): m is string => typeof m === 'string'))
    return markers;
  return ['.git'];
}

/** The project layers between the project root and `cwd` whose directory is trusted. */
async function projectLayers(
  cwd: string,
  discovery: TomlTable,
  codexHome: string,
): Promise<LocalLayer[]> {
  const root = await projectRoot(cwd, rootMarkers(discovery));
  const trust = projectTrust(discovery);
  const repo = await repositoryRoot(cwd);
  const fallbackKeys = [
    ...(await trustKeys(root)),
    ...(repo === undefined ? [] : await trustKeys(repo)),
  ];
  const dirs = ancestors(cwd);
  const rootIndex = dirs.indexOf(root);
  const chain = (rootIndex === -1 ? [cwd] : dirs.slice(0, rootIndex + 1)).reverse();
  const layers: LocalLayer[] = [];
  for (const dir of chain) {
    const dotCodex = join(dir, '.codex');
    if (!(await isDirectory(dotCodex))) continue;
    if (dotCodex === codexHome || (await canonicalOr(dotCodex)) === codexHome) continue;
    const keys = [...(await trustKeys(dir)), ...fallbackKeys];
    const level = keys.map((key) => trust.get(key)).find((found) => found !== undefined);
    if (level !== 'trusted') continue;
    const file = join(dotCodex, 'config.toml');
    let config: TomlTable | undefined;
    try {
      config = await readTomlFile(file);
    } catch (error) {
      const detail = error instanceof Error ? error.message.replace(`${file}:`, '') : '';
      throw new Error(`Error parsing project config file ${file}: ${detail}`);
    }
    const toml: TomlTable = { ...(config ?? {}) };
    for (const key of PROJECT_LOCAL_DENYLIST) delete toml[key];
    layers.push({ source: `project (${file})`, baseDir: dotCodex, toml });
  }
  return layers;
}

/** `managed_config.toml` read as requirements, the way codex keeps supporting it. */
function legacyRequirements(managed: TomlTable): TomlTable {
  const table: TomlTable = {};
  if (managed.approval_policy !== undefined)
    table.allowed_approval_policies = [managed.approval_policy];
  const reviewer = managed.approvals_reviewer;
  if (reviewer !== undefined)
    table.allowed_approvals_reviewers =
      reviewer === 'auto_review' ? [reviewer, 'user'] : [reviewer];
  const mode = managed.sandbox_mode;
  if (mode !== undefined)
    table.allowed_sandbox_modes = mode === 'read-only' ? ['read-only'] : ['read-only', mode];
  return table;
}

/** Every local layer for `cwd`, before projection. */
export async function loadLocalLayers(
  locations: ConfigLocations,
  cwd: string,
): Promise<{ config: LayerStack; requirements: LayerStack }> {
  const { codexHome, systemDir } = locations;
  const systemFile = join(systemDir, 'config.toml');
  const userFile = join(codexHome, 'config.toml');
  const managedFile = join(systemDir, 'managed_config.toml');
  const system = (await readTomlFile(systemFile)) ?? {};
  const user = (await readTomlFile(userFile)) ?? {};
  const managed = await readTomlFile(managedFile);
  const discovery = mergeToml(mergeToml(system, user), managed ?? {});
  const config: LocalLayer[] = [
    { source: `system (${systemFile})`, baseDir: systemDir, toml: system },
    { source: `user (${userFile})`, baseDir: codexHome, toml: user },
    ...(await projectLayers(cwd, discovery, codexHome)),
  ];
  if (managed)
    config.push({
      source: `legacy managed_config.toml (${managedFile})`,
      baseDir: systemDir,
      toml: managed,
    });

  const requirementsFile = join(systemDir, 'requirements.toml');
  const systemRequirements = await readTomlFile(requirementsFile);
  const requirements: LocalLayer[] = [];
  if (systemRequirements)
    requirements.push({ source: requirementsFile, baseDir: systemDir, toml: systemRequirements });
  if (managed)
    requirements.push({
      source: managedFile,
      baseDir: systemDir,
      toml: legacyRequirements(managed),
    });
  return {
    config: { layers: config, cloudInsertionIndex: 1 },
    requirements: { layers: requirements, cloudInsertionIndex: systemRequirements ? 1 : 0 },
  };
}

interface Selector {
  terminal: boolean;
  children: Map<string, Selector>;
}

function selectorTree(paths: readonly (readonly string[])[]): Selector {
  const root: Selector = { terminal: false, children: new Map() };
  for (const path of paths) {
    let node = root;
    for (const segment of path) {
      if (node.terminal) break;
      let child = node.children.get(segment);
      if (!child) node.children.set(segment, (child = { terminal: false, children: new Map() }));
      node = child;
    }
    node.terminal = true;
    node.children.clear();
  }
  return root;
}

function projectValue(value: TomlValue, selector: Selector): TomlValue {
  // A selected subtree is kept whole; a non-table above a selector is kept so it still overrides.
  if (selector.terminal || !isTable(value)) return value;
  const projected: TomlTable = {};
  for (const [key, child] of Object.entries(value)) {
    const next = selector.children.get(key);
    if (next) projected[key] = projectValue(child, next);
  }
  return projected;
}

/** Keeps only the selected TOML paths; layers left empty are dropped. */
export function projectStack(stack: LayerStack, paths: readonly (readonly string[])[]): LayerStack {
  const selector = selectorTree(paths);
  const layers: LocalLayer[] = [];
  let cloudInsertionIndex = 0;
  stack.layers.forEach((layer, index) => {
    const toml = projectValue(layer.toml, selector) as TomlTable;
    if (!selector.terminal && Object.keys(toml).length === 0) return;
    if (index < stack.cloudInsertionIndex) cloudInsertionIndex += 1;
    layers.push({ ...layer, toml });
  });
  return { layers, cloudInsertionIndex };
}
