/**
 * The `sandbox` contexts codex 0.169.0's agent sends with `process/start` and `fs/*`
 * (spec/README "Sandboxes"), for specs and benchmarks.
 */
import { execFileSync } from 'node:child_process';

export type Entry = Record<string, unknown>;
export const special = (kind: string, subpath?: string): Entry => ({
  type: 'special',
  value: subpath === undefined ? { kind } : { kind, subpath },
});
const metadata = (name: string): Entry => ({
  path: special('project_roots', name),
  access: 'read',
  missing_path_behavior: 'skip',
});

/** The `sandbox` of `codex exec -s workspace-write` (spec/README "Sandboxes"). */
export function workspaceWrite(workspace: string, extra: Entry[] = []): Entry {
  return context(workspace, [
    { path: special('root'), access: 'read' },
    { path: special('project_roots'), access: 'write' },
    { path: special('slash_tmp'), access: 'write' },
    { path: special('tmpdir'), access: 'write' },
    metadata('.git'),
    metadata('.agents'),
    metadata('.codex'),
    metadata('.aws'),
    ...extra,
  ]);
}

/** The `sandbox` of `codex exec -s read-only`. */
export function readOnly(workspace: string, extra: Entry[] = []): Entry {
  return context(workspace, [{ path: special('root'), access: 'read' }, ...extra]);
}

/** A managed, restricted profile of exactly `entries`, `workspace` its cwd and project root. */
export function context(workspace: string, entries: Entry[]): Entry {
  return {
    permissions: {
      type: 'managed',
      file_system: { type: 'restricted', entries },
      network: 'restricted',
    },
    cwd: `file://${workspace}`,
    workspaceRoots: [`file://${workspace}`],
    windowsSandboxLevel: 'disabled',
    windowsSandboxProxySettingsMode: 'reconcile',
    useLegacyLandlock: false,
  };
}

/** The command lines of host processes whose command line contains `text` ('' if none). */
export function hostProcessesMatching(text: string): string {
  try {
    return execFileSync('pgrep', ['-af', text], { encoding: 'utf8' });
  } catch {
    return ''; // pgrep exits 1 when nothing matches
  }
}
