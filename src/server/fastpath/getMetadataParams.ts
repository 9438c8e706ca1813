/**
 * A hand-written check of `fs/getMetadata`'s params (params.ts `FsGetMetadataParams`): the
 * value the schema's `parse` gives for params without a sandbox context, undefined for anything
 * else (the schema then decides, and words the error). spec/server/fastpath/getMetadataParams.spec.ts
 * holds it to the plain twin (bench/plain/server/fastpath/getMetadataParams.ts), a zod schema.
 */
export function checkGetMetadataParams(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const { path, followSymlinks, sandbox } = record;
  if (typeof path !== 'string') return undefined;
  // `sandbox: null` is what clients send; a sandbox context goes through the schema.
  if (sandbox !== undefined && sandbox !== null) return undefined;
  if (followSymlinks !== undefined && followSymlinks !== null) {
    if (typeof followSymlinks !== 'boolean') return undefined;
  }
  const params: Record<string, unknown> = { path };
  if ('followSymlinks' in record) params.followSymlinks = followSymlinks;
  if ('sandbox' in record) params.sandbox = sandbox;
  return params;
}
