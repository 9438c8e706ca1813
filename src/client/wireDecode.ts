/**
 * Decoding of what the executor sends, against the method table's schemas: a mismatch is a
 * JsonError naming the method (spec/protocol.md §17.1). Hot shapes take the hand-written checks
 * of protocol/fastpath/fastChecks.ts, which spec/protocol/fastpath/fastChecks.spec.ts holds to the schemas.
 */
import type { z } from 'zod';
import { JsonError } from '../protocol/errors.js';
import { fastCheckFor } from '../protocol/fastpath/fastChecks.js';
import type { JsonRpcNotification } from '../protocol/jsonrpc.js';
import { serverNotifications, type ServerNotification } from '../protocol/methods.js';

/** Decodes a result with its schema; a mismatch is a JsonError naming the method. */
export function decodeResult<S extends z.ZodType>(
  method: string,
  schema: S,
  raw: unknown,
): z.output<S> {
  const checked = fastCheckFor(schema)?.(raw);
  if (checked !== undefined) return checked;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new JsonError(`\`${method}\` result did not match the protocol: ${parsed.error.message}`);
  }
  return parsed.data;
}

/** Decodes the params of an executor notification with the table's schema. */
export function decodeNotification<N extends ServerNotification>(
  method: N,
  notification: JsonRpcNotification,
): z.output<(typeof serverNotifications)[N]> {
  const schema: z.ZodType = serverNotifications[method];
  const checked = fastCheckFor(schema)?.(notification.params);
  if (checked !== undefined) return checked as z.output<(typeof serverNotifications)[N]>;
  const parsed = schema.safeParse(notification.params);
  if (!parsed.success) {
    throw new JsonError(`\`${method}\` params did not match the protocol: ${parsed.error.message}`);
  }
  return parsed.data as z.output<(typeof serverNotifications)[N]>;
}
