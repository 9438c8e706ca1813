/**
 * The child environment of `process/start` (spec §6.3): exactly `env` without a policy;
 * otherwise the executor's own environment filtered by the policy, with `env` on top.
 */
import type { EnvPolicy } from './params.js';

const CORE_VARIABLES = [
  'PATH',
  'SHELL',
  'TMPDIR',
  'TEMP',
  'TMP',
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'LOGNAME',
  'USER',
];
const DEFAULT_EXCLUDES = ['*KEY*', '*SECRET*', '*TOKEN*'];
/** Never handed to children: it would make a nested executor exit with its parent's stdin. */
const EXECUTOR_ONLY_VARIABLE = 'CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE';

/** Case-insensitive glob with `*` and `?`. */
function globMatches(pattern: string, name: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 'i').test(name);
}

const matchesAny = (patterns: readonly string[], name: string): boolean =>
  patterns.some((p) => globMatches(p, name));

export function childEnvironment(
  env: Record<string, string>,
  policy: EnvPolicy | null | undefined,
  executorEnv: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  let result: Record<string, string> = {};
  if (policy) {
    for (const [name, value] of Object.entries(executorEnv)) {
      if (value === undefined) continue;
      if (policy.inherit === 'none') continue;
      if (
        policy.inherit === 'core' &&
        !CORE_VARIABLES.some((core) => core.toUpperCase() === name.toUpperCase())
      )
        continue;
      result[name] = value;
    }
    const excludes = policy.ignoreDefaultExcludes
      ? policy.exclude
      : [...DEFAULT_EXCLUDES, ...policy.exclude];
    result = Object.fromEntries(
      Object.entries(result).filter(([name]) => !matchesAny(excludes, name)),
    );
    Object.assign(result, policy.set);
    if (policy.includeOnly.length > 0) {
      result = Object.fromEntries(
        Object.entries(result).filter(([name]) => matchesAny(policy.includeOnly, name)),
      );
    }
  }
  Object.assign(result, env);
  delete result[EXECUTOR_ONLY_VARIABLE];
  // The Rust executor hands the child a sorted map; keep the same order for identical `env` output.
  return Object.fromEntries(
    Object.entries(result).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}
