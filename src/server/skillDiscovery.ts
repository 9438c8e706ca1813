/**
 * `capabilities/discoverV2` (probed on 0.169.0, spec/fixtures/FINDINGS.md "Agent capabilities"):
 * the skills of `$CODEX_HOME/skills` (root id `codex-home-skills`) and `~/.agents/skills`
 * (`user-agent-skills`), and the plugins enabled in `$CODEX_HOME/config.toml` from the plugin
 * cache (`pluginDiscovery.ts`). Each root is walked as discoverV1 walks (depth 6, hidden
 * directories and directory symlinks included); skills sorted by path within a root.
 *
 * A skill is its `SKILL.md` front matter (`name`, `description`, `metadata.short-description`)
 * plus `agents/openai.yaml` (`dependencies.tools`, `policy`). A `SKILL.md` that cannot be
 * loaded is skipped and the answer carries the single warning `CAPABILITY_WARNING`.
 * A request with a confining sandbox is refused (`capabilityDiscoverySandbox` false).
 * Guarded by spec/conformance/capabilitiesSuite.ts and spec/server/skillDiscovery.spec.ts.
 */
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { isMap, isScalar, parse, parseDocument } from 'yaml';
import type { ConfigLocations } from './configLayers.js';
import { CAPABILITY_WALK } from './discovery.js';
import { walk } from './filesystem.js';
import { fsPath, pathFromUri, uriFromPath } from './hostPath.js';
import { PathUriError } from '../protocol/pathUri.js';
import { discoverPlugins, type DiscoveredPlugin } from './pluginDiscovery.js';
import { RpcFailure } from './rpcFailure.js';
import { sandboxPlan } from './sandbox/permissionProfile.js';

export const CAPABILITY_WARNING =
  'some capability metadata could not be loaded; discovery may be incomplete';
const MAX_NAME_CHARS = 64;
const MAX_SKILL_FILE_BYTES = 1024 * 1024;
const MAX_SKILLS_PER_ROOT = 2000;

export interface SkillTool {
  type: string | null;
  value: string | null;
  description: string | null;
  transport: string | null;
  command: string | null;
  url: string | null;
  oauthCallbackPort: number | null;
}

export interface SkillSummary {
  name: string;
  description: string;
  shortDescription: string | null;
  path: string;
  dependencies: { tools: SkillTool[] } | null;
  policy: { allowImplicitInvocation: boolean | null; products: string[] } | null;
}

export interface DiscoveredSkill extends SkillSummary {
  discoveryRoot: { id: string; path: string };
}

export interface DiscoverV2Result {
  plugins: DiscoveredPlugin[];
  skills: DiscoveredSkill[];
  warnings: string[];
}

/** Whitespace runs (newlines included) become one space; ends trimmed. */
const singleLine = (text: string): string => text.replace(/\s+/gu, ' ').trim();

/** The front matter between a leading `---` line and the next `---` line, or undefined. */
function frontMatter(text: string): string | undefined {
  const lines = text.split(/\r?\n/u);
  if (lines[0] !== '---') return undefined;
  const end = lines.indexOf('---', 1);
  return end < 0 ? undefined : lines.slice(1, end).join('\n');
}

/**
 * Top-level string fields of the front matter. A value that is not a YAML string is taken as
 * its source text (`name: 123` → `"123"`, `description: {a: 1}` → `"{a: 1}"`); when the YAML
 * has errors, plain `key: value` lines are taken as written and any quoted value fails it.
 */
function frontMatterFields(source: string): Map<string, unknown> | undefined {
  const doc = parseDocument(source, { uniqueKeys: false });
  const fields = new Map<string, unknown>();
  if (doc.errors.length === 0) {
    if (doc.contents === null) return fields;
    if (!isMap(doc.contents)) return undefined;
    for (const pair of doc.contents.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key === undefined) continue;
      const node = pair.value;
      if (isScalar(node)) {
        fields.set(
          key,
          typeof node.value === 'string' ? node.value : (node.source ?? String(node.value)),
        );
      } else if (isMap(node) && key === 'metadata') {
        fields.set(key, node.toJSON());
      } else if (node && typeof node === 'object' && 'range' in node && node.range) {
        fields.set(key, source.slice(node.range[0], node.range[1]).trimEnd());
      }
    }
    return fields;
  }
  for (const line of source.split('\n')) {
    const match = /^([A-Za-z_][\w-]*):[ \t]*(.*)$/u.exec(line);
    if (!match) continue;
    const value = (match[2] as string).trim();
    if (value.startsWith('"') || value.startsWith("'")) return undefined;
    fields.set(match[1] as string, value);
  }
  return fields;
}

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function toolOf(raw: unknown): SkillTool {
  const tool = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const port = tool.oauth_callback_port;
  return {
    type: stringOrNull(tool.type),
    value: stringOrNull(tool.value),
    description: stringOrNull(tool.description),
    transport: stringOrNull(tool.transport),
    command: stringOrNull(tool.command),
    url: stringOrNull(tool.url),
    oauthCallbackPort: typeof port === 'number' && Number.isInteger(port) ? port : null,
  };
}

/** `agents/openai.yaml` beside the skill: dependencies and policy; unreadable → both null. */
async function skillMetadata(
  skillDir: string,
): Promise<Pick<SkillSummary, 'dependencies' | 'policy'>> {
  const none = { dependencies: null, policy: null };
  let parsed: unknown;
  try {
    const file = join(skillDir, 'agents', 'openai.yaml');
    if ((await stat(file)).size > MAX_SKILL_FILE_BYTES) return none;
    parsed = parse(await readFile(file, 'utf8'));
  } catch {
    return none;
  }
  if (typeof parsed !== 'object' || parsed === null) return none;
  const record = parsed as Record<string, unknown>;
  const tools = (record.dependencies as { tools?: unknown } | null | undefined)?.tools;
  const policy = record.policy;
  return {
    dependencies: Array.isArray(tools) && tools.length > 0 ? { tools: tools.map(toolOf) } : null,
    policy:
      typeof policy === 'object' && policy !== null && !Array.isArray(policy)
        ? {
            allowImplicitInvocation:
              typeof (policy as Record<string, unknown>).allow_implicit_invocation === 'boolean'
                ? ((policy as Record<string, unknown>).allow_implicit_invocation as boolean)
                : null,
            products: Array.isArray((policy as Record<string, unknown>).products)
              ? ((policy as Record<string, unknown>).products as unknown[]).filter(
                  (item): item is string => typeof item === 'string',
                )
              : [],
          }
        : null,
  };
}

/** One `SKILL.md`, or undefined when it cannot be loaded (no front matter, name, description). */
export async function loadSkill(path: string): Promise<SkillSummary | undefined> {
  let text: string;
  try {
    if ((await stat(path)).size > MAX_SKILL_FILE_BYTES) return undefined;
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  const source = frontMatter(text);
  const fields = source === undefined ? undefined : frontMatterFields(source);
  if (!fields) return undefined;
  const rawName = fields.get('name');
  const rawDescription = fields.get('description');
  const name = singleLine(typeof rawName === 'string' ? rawName : '') || basename(dirname(path));
  const description = singleLine(typeof rawDescription === 'string' ? rawDescription : '');
  if (description === '' || [...name].length > MAX_NAME_CHARS) return undefined;
  const metadata = fields.get('metadata');
  const short =
    typeof metadata === 'object' && metadata !== null
      ? (metadata as Record<string, unknown>)['short-description']
      : undefined;
  const shortDescription = typeof short === 'string' ? singleLine(short) : '';
  return {
    name,
    description,
    shortDescription: shortDescription === '' ? null : shortDescription,
    path: uriFromPath(path),
    ...(await skillMetadata(dirname(path))),
  };
}

/** Every skill below `root` (sorted by path); `failed` is set when one could not be loaded. */
export async function skillsUnder(
  root: string,
): Promise<{ skills: SkillSummary[]; failed: boolean }> {
  try {
    if (!(await stat(root)).isDirectory()) return { skills: [], failed: false };
  } catch {
    return { skills: [], failed: false };
  }
  const outcome = await walk({ path: uriFromPath(root), options: CAPABILITY_WALK });
  const files = outcome.entries
    .filter((entry) => entry.kind === 'file' && entry.path.endsWith('/SKILL.md'))
    .map((entry) => fsPath(entry.path))
    .sort()
    .slice(0, MAX_SKILLS_PER_ROOT);
  const skills: SkillSummary[] = [];
  let failed = false;
  for (const file of files) {
    const skill = await loadSkill(file);
    if (skill) skills.push(skill);
    else failed = true;
  }
  return { skills, failed };
}

export async function discoverCapabilitiesV2(
  params: { cwd: string; sandbox?: unknown },
  locations: () => ConfigLocations,
): Promise<DiscoverV2Result> {
  try {
    pathFromUri(params.cwd);
  } catch (error) {
    if (error instanceof PathUriError) throw RpcFailure.invalidParams(error.message);
    throw error;
  }
  // Discovery under a confining sandbox is not implemented (DIVERGENCES: capabilityDiscoverySandbox).
  if (sandboxPlan(params.sandbox, process.cwd()).kind === 'confined') {
    throw RpcFailure.invalidRequest('sandbox intent cannot be enforced on this executor');
  }
  const { codexHome } = locations();
  const warnings: string[] = [];
  const plugins = await discoverPlugins(codexHome, skillsUnder);
  if (plugins.failed) warnings.push(CAPABILITY_WARNING);
  const skills: DiscoveredSkill[] = [];
  const home = homedir();
  const roots = [
    { id: 'codex-home-skills', path: join(codexHome, 'skills') },
    ...(home ? [{ id: 'user-agent-skills', path: join(home, '.agents', 'skills') }] : []),
  ];
  for (const root of roots) {
    const found = await skillsUnder(root.path);
    if (found.failed && !warnings.includes(CAPABILITY_WARNING)) warnings.push(CAPABILITY_WARNING);
    const discoveryRoot = { id: root.id, path: uriFromPath(root.path) };
    for (const { dependencies, policy, ...identity } of found.skills)
      skills.push({ ...identity, discoveryRoot: { ...discoveryRoot }, dependencies, policy });
  }
  return { plugins: plugins.plugins, skills, warnings };
}
