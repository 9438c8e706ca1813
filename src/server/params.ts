/**
 * Params schemas of the requests the executor serves, and a decoder that reports failures in
 * serde's words (`missing field \`path\``, `invalid type: string "a", expected a sequence`), as
 * the Rust executor does (-32602, spec §3.4). Unknown fields are ignored; `Option` fields
 * accept absent or null.
 */
import * as z from 'zod';
import { checkGetMetadataParams } from './fastpath/getMetadataParams.js';
import { RpcFailure } from './rpcFailure.js';

/**
 * Unsigned integers, named by their Rust type: serde words a wrong value `expected u64` or
 * `expected usize` (probed per field on 0.169.0; spec/server/params.spec.ts). The name rides
 * in the issue's message, which `serdeMessage` reads.
 */
const unsigned = (rustType: 'u64' | 'usize') =>
  z.number({ error: rustType }).int({ error: rustType }).nonnegative({ error: rustType });
const u64 = unsigned('u64');
const usize = unsigned('usize');
const base64Text = z.string();

export const InitializeParams = z.object({
  clientName: z.string(),
  resumeSessionId: z.string().nullish(),
});

const EnvPolicy = z.object({
  inherit: z.enum(['all', 'none', 'core']),
  ignoreDefaultExcludes: z.boolean(),
  exclude: z.array(z.string()),
  set: z.record(z.string(), z.string()),
  includeOnly: z.array(z.string()),
});
export type EnvPolicy = z.infer<typeof EnvPolicy>;

export const ProcessStartParams = z.object({
  processId: z.string(),
  argv: z.array(z.string()),
  cwd: z.string(),
  envPolicy: EnvPolicy.nullish(),
  env: z.record(z.string(), z.string()),
  tty: z.boolean(),
  // serde `default` fields: absent is fine, null is not (as on the binary).
  pipeStdin: z.boolean().optional(),
  arg0: z.string().nullish(),
  sandbox: z.unknown().optional(),
});
export type ProcessStartParams = z.infer<typeof ProcessStartParams>;

export const ProcessReadParams = z.object({
  processId: z.string(),
  afterSeq: u64.nullish(),
  maxBytes: usize.nullish(),
  waitMs: u64.nullish(),
});

export const ProcessWriteParams = z.object({
  processId: z.string(),
  chunk: base64Text,
  writeId: z.string(),
});
export const ProcessSignalParams = z.object({
  processId: z.string(),
  signal: z.enum(['interrupt']),
});
export const ProcessTerminateParams = z.object({ processId: z.string() });

const sandbox = z.unknown().optional();
const followSymlinks = z.boolean().nullish();

export const FsReadFileParams = z.object({ path: z.string(), followSymlinks, sandbox });
export const FsWriteFileParams = z.object({
  path: z.string(),
  dataBase64: z.string(),
  followSymlinks,
  sandbox,
});
export const FsCreateDirectoryParams = z.object({
  path: z.string(),
  recursive: z.boolean().nullish(),
  followSymlinks,
  sandbox,
});
export const FsGetMetadataParams = z.object({ path: z.string(), followSymlinks, sandbox });

/**
 * Hand-written equivalents of the executor's hottest params schemas: what the schema's
 * `parse` returns for a value it accepts, undefined for anything else (the schema then words
 * the error), so a check never changes what is accepted (fastpath/getMetadataParams.ts).
 */
const EXECUTOR_FAST_CHECKS = new Map<z.ZodType, (value: unknown) => unknown>([
  [FsGetMetadataParams, checkGetMetadataParams],
]);

/** The executor's hand-written check of `schema`, if it has one (exported for its spec). */
export function executorFastCheck(schema: z.ZodType): ((value: unknown) => unknown) | undefined {
  return EXECUTOR_FAST_CHECKS.get(schema);
}
export const FsCanonicalizeParams = z.object({ path: z.string(), sandbox });
export const FsReadDirectoryParams = z.object({ path: z.string(), sandbox });
export const FsRemoveParams = z.object({
  path: z.string(),
  recursive: z.boolean().nullish(),
  force: z.boolean().nullish(),
  followSymlinks,
  sandbox,
});
export const FsCopyParams = z.object({
  sourcePath: z.string(),
  destinationPath: z.string(),
  recursive: z.boolean(),
  sandbox,
});
export const FsWalkParams = z.object({
  path: z.string(),
  options: z.object({
    maxDepth: usize,
    maxDirectories: usize,
    maxEntries: usize,
    followDirectorySymlinks: z.boolean(),
    pruneHiddenDirectories: z.boolean().optional(),
  }),
  sandbox,
});
export const FsOpenParams = z.object({
  handleId: z.string(),
  path: z.string(),
  mode: z.enum(['read', 'replace']).optional(),
  sandbox,
});
export const FsReadBlockParams = z.object({ handleId: z.string(), offset: u64, len: usize });
export const FsWriteBlockParams = z.object({
  handleId: z.string(),
  offset: u64,
  chunk: base64Text,
});
export const FsCloseParams = z.object({ handleId: z.string() });

export const HttpRequestParams = z.object({
  method: z.string(),
  url: z.string(),
  headers: z
    .array(z.object({ name: z.string(), value: z.string(), valueEnvVar: z.string().nullish() }))
    .optional(),
  bodyBase64: z.string().nullish(),
  timeoutMs: u64.nullish(),
  redirectPolicy: z.enum(['follow', 'stop']).optional(),
  requestId: z.string(),
  streamResponse: z.boolean().optional(),
});
export type HttpRequestParams = z.infer<typeof HttpRequestParams>;

export const EnvironmentConfigReadParams = z.object({
  cwd: z.string(),
  configPaths: z.array(z.array(z.string())),
  requirementsPaths: z.array(z.array(z.string())),
});
export const CapabilityRootsDiscoverV1Params = z.object({
  roots: z.array(z.object({ id: z.string(), path: z.string(), sandbox })),
});
export const CapabilitiesDiscoverV2Params = z.object({ cwd: z.string(), sandbox });
export const FsWatchMissingParams = z.object({
  watchId: u64,
  missing: z.array(z.string()),
  present: z.string().nullish(),
});

/** Methods without params: `null`, absent and `{}` are all accepted. */
export const NoParams = z.union([z.null(), z.undefined(), z.object({}).strict()]);

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (Array.isArray(value)) return 'sequence';
  return 'map';
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  boolean: 'a boolean',
  array: 'a sequence',
  object: 'a map',
  record: 'a map',
  null: 'unit',
};

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function serdeMessage(issue: z.core.$ZodIssue, params: unknown): string {
  const value = valueAt(params, issue.path);
  const key = issue.path[issue.path.length - 1];
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined && typeof key === 'string') return `missing field \`${key}\``;
      // A number where a u64 belongs (1.5, 2^53+) is serde_json's `invalid number`.
      if (issue.expected === 'number' || issue.expected === 'int') {
        // A number that is no unsigned integer (1.5, 2^53+) is serde_json's `invalid number`.
        if (typeof value === 'number') return 'invalid number';
        return `invalid type: ${describeValue(value)}, expected ${issue.message}`;
      }
      return `invalid type: ${describeValue(value)}, expected ${EXPECTED[issue.expected] ?? issue.expected}`;
    case 'invalid_value': {
      const options = issue.values.map((option) => `\`${String(option)}\``);
      // serde's wording: one variant, `a` or `b`, else `one of a, b, c`.
      const expected =
        options.length === 1
          ? options[0]
          : options.length === 2
            ? `${options[0]} or ${options[1]}`
            : `one of ${options.join(', ')}`;
      return `unknown variant \`${String(value)}\`, expected ${expected}`;
    }
    case 'too_small':
    case 'too_big':
      return 'invalid number';
    case 'invalid_union': {
      const first = issue.errors[0]?.[0];
      return first
        ? serdeMessage(first, params)
        : `invalid type: ${describeValue(value)}, expected unit`;
    }
    default:
      return issue.message;
  }
}

/**
 * The params decoder of `schema`: returns the decoded params or throws `RpcFailure(-32602,
 * <serde-style message>)`. Hot methods have a hand-written check of the same contract
 * (above), looked up here once rather than on every request.
 */
export function paramsDecoder<T>(schema: z.ZodType<T>): (params: unknown) => T {
  const fastCheck = EXECUTOR_FAST_CHECKS.get(schema) as
    ((value: unknown) => T | undefined) | undefined;
  return (params) => {
    const checked = fastCheck?.(params);
    if (checked !== undefined) return checked;
    const parsed = schema.safeParse(params === undefined ? null : params);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    throw RpcFailure.invalidParams(issue ? serdeMessage(issue, params) : 'invalid params');
  };
}
