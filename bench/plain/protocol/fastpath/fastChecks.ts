/**
 * Plain twin of src/protocol/fastpath/fastChecks.ts (bench/support/plainTwins.ts): the check of
 * a schema is the schema's own `safeParse`.
 */
import type { z } from 'zod';

export function fastCheckFor<S extends z.ZodType>(
  schema: S,
): ((value: unknown) => z.output<S> | undefined) | undefined {
  return (value) => {
    const parsed = schema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  };
}
