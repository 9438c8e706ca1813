/**
 * Plain twin of src/protocol/fastChecks.ts (bench/support/plainTwins.ts): no hand-written
 * check, so every result and notification is decoded by its zod schema.
 */
import type { z } from 'zod';

export function fastCheckFor<S extends z.ZodType>(
  _schema: S,
): ((value: unknown) => z.output<S> | undefined) | undefined {
  return undefined;
}
