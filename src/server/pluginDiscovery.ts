/**
 * The plugin half of `capabilities/discoverV2` (probed on 0.169.0, FINDINGS "Agent
 * capabilities"): every plugin in `$CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>/`,
 * enabled or not (the caller applies enablement). The version directory is the greatest name
 * in byte order (`local` beats `2.0.0`, `abc` beats `2.0.0`). The id is `<plugin dir>@<marketplace>`;
 * the manifest `.codex-plugin/plugin.json` gives the skill namespace (`name`, else the
 * directory), `interface.displayName`, and the `mcpServers` and `apps` paths (discoverV1's
 * rules). Its skills are every `SKILL.md` below the version directory, as discoverV1 walks a
 * root (a manifest `skills` path adds nothing: both `skills/` and `custom/` are found). A plugin whose manifest is unreadable or not JSON is left out and
 * reported (`failed`). At most 64 marketplaces × 256 plugins are looked at.
 * Guarded by spec/conformance/capabilitiesSuite.ts.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { referencedConfig } from './discovery.js';
import { pathExists } from './pathProbe.js';
import { uriFromPath } from './hostPath.js';
import type { SkillSummary } from './skillDiscovery.js';

const MAX_MARKETPLACES = 64;
const MAX_PLUGINS_PER_MARKETPLACE = 256;
const MAX_MANIFEST_BYTES = 1024 * 1024;

interface TextFile {
  path: string;
  contents: string;
}

export interface DiscoveredPlugin {
  id: string;
  displayName: string;
  remotePluginId: string | null;
  version: string;
  root: string;
  files: { manifest: TextFile; mcpConfig: TextFile | null; appsConfig: TextFile | null };
  skills: SkillSummary[];
}

type SkillLoader = (root: string) => Promise<{ skills: SkillSummary[]; failed: boolean }>;

/** Directory names in `dir`, sorted by bytes; none when it cannot be read. */
async function directories(dir: string, limit: number): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      .slice(0, limit);
  } catch {
    return [];
  }
}

async function textFile(path: string): Promise<TextFile | null> {
  try {
    if (!(await pathExists(path)) || (await stat(path)).size > MAX_MANIFEST_BYTES) return null;
    return { path: uriFromPath(path), contents: await readFile(path, 'utf8') };
  } catch {
    return null;
  }
}

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

async function loadPlugin(
  marketplace: string,
  name: string,
  root: string,
  version: string,
  loadSkills: SkillLoader,
): Promise<{ plugin?: DiscoveredPlugin; failed: boolean }> {
  const manifest = await textFile(join(root, '.codex-plugin', 'plugin.json'));
  if (!manifest) return { failed: true };
  let parsed: unknown;
  try {
    parsed = JSON.parse(manifest.contents);
  } catch {
    return { failed: true };
  }
  const fields = record(parsed);
  const namespace = typeof fields.name === 'string' && fields.name !== '' ? fields.name : name;
  const display = record(fields.interface).displayName;
  const ignored: string[] = [];
  const config = async (field: 'mcpServers' | 'apps', fallback: string) => {
    const file = await referencedConfig(root, manifest.path, parsed, field, fallback, ignored);
    return file === undefined ? null : textFile(file);
  };
  const found = await loadSkills(root);
  return {
    failed: found.failed,
    plugin: {
      id: `${name}@${marketplace}`,
      displayName: typeof display === 'string' && display !== '' ? display : namespace,
      remotePluginId: null,
      version,
      root: uriFromPath(root),
      files: {
        manifest,
        mcpConfig: await config('mcpServers', '.mcp.json'),
        appsConfig: await config('apps', '.app.json'),
      },
      skills: found.skills.map((skill) => ({ ...skill, name: `${namespace}:${skill.name}` })),
    },
  };
}

export async function discoverPlugins(
  codexHome: string,
  loadSkills: SkillLoader,
): Promise<{ plugins: DiscoveredPlugin[]; failed: boolean }> {
  const cache = join(codexHome, 'plugins', 'cache');
  const plugins: DiscoveredPlugin[] = [];
  let failed = false;
  for (const marketplace of await directories(cache, MAX_MARKETPLACES)) {
    for (const name of await directories(join(cache, marketplace), MAX_PLUGINS_PER_MARKETPLACE)) {
      const versions = await directories(join(cache, marketplace, name), Number.MAX_SAFE_INTEGER);
      const version = versions[versions.length - 1];
      if (version === undefined) continue;
      const root = join(cache, marketplace, name, version);
      const outcome = await loadPlugin(marketplace, name, root, version, loadSkills);
      if (outcome.failed) failed = true;
      if (outcome.plugin) plugins.push(outcome.plugin);
    }
  }
  return { plugins, failed };
}
