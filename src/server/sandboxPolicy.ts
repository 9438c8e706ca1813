/**
 * Whether a `FileSystemSandboxContext` (spec §7.11) asks for confinement. This executor has
 * no platform sandbox, so such requests are refused rather than run unconfined.
 */

/** True iff the profile is managed, its file system restricted, and it does not grant full-disk write. */
export function sandboxRequiresConfinement(sandbox: unknown): boolean {
  if (sandbox === null || sandbox === undefined || typeof sandbox !== 'object') return false;
  const permissions = (sandbox as { permissions?: unknown }).permissions;
  if (permissions === null || typeof permissions !== 'object') return true;
  const profile = permissions as {
    type?: unknown;
    file_system?: { type?: unknown; entries?: unknown };
  };
  if (profile.type !== 'managed') return false;
  const fileSystem = profile.file_system;
  if (!fileSystem || fileSystem.type !== 'restricted') return false;
  const entries = Array.isArray(fileSystem.entries)
    ? (fileSystem.entries as Record<string, unknown>[])
    : [];
  const rootWrite = entries.some((entry) => {
    const path = entry.path as { type?: unknown; value?: { kind?: unknown } } | undefined;
    return entry.access === 'write' && path?.type === 'special' && path.value?.kind === 'root';
  });
  const narrowed = entries.some((entry) => entry.access === 'deny' || entry.access === 'read');
  return !(rootWrite && !narrowed);
}
