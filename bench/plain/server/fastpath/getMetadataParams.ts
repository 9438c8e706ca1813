/** Plain twin of src/server/fastpath/getMetadataParams.ts: the zod schema, without a sandbox. */
import { z } from 'zod';

const WithoutSandbox = z.object({
  path: z.string(),
  followSymlinks: z.boolean().nullish(),
  sandbox: z.null().optional(),
});

export function checkGetMetadataParams(value: unknown): unknown {
  const parsed = WithoutSandbox.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
