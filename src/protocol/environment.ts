/**
 * `environment/info`, `environment/status` and `environmentConfig/read`
 * (spec/protocol.md §9; shapes confirmed against the 0.169.0 executor, spec/fixtures/FINDINGS.md).
 *
 * Inbound fields that older executors omit get the defaults the upstream client applies, so
 * the parsed type is always complete.
 */
import * as z from 'zod';
import { PathUri } from './pathUri.js';

/**
 * Methods without parameters are sent with `"params": null` (§2.5). On input an absent
 * `params` or `{}` means the same (the executor accepts all three).
 */
export const NoParams = z.preprocess(
  (value) =>
    value === undefined ||
    (typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.keys(value).length === 0)
      ? null
      : value,
  z.null(),
);
export type NoParams = z.infer<typeof NoParams>;

/** The executor's login shell as `environment/info` reports it (name and path). */
export const ShellInfo = z.object({
  /** `zsh`, `bash`, `sh`, `powershell` or `cmd`. */
  name: z.string(),
  /** Native shell path or command name (not a URI). */
  path: z.string(),
});
export type ShellInfo = z.infer<typeof ShellInfo>;

const flag = () => z.boolean().default(false);

/** Feature flags; every flag defaults to false when the executor omits it. */
export const EnvironmentCapabilities = z.object({
  networkProxyLaunch: flag(),
  networkProxyReviewDomains: flag(),
  credentialMasking: flag(),
  credentialMaskingCustomProviders: flag(),
  capabilityDiscoverySandbox: flag(),
  fsWatchMissing: flag(),
  capabilityDiscoveryV2: flag(),
  environmentConfigRead: flag(),
  httpHeaderEnvVars: flag(),
  sandboxedFileStreaming: flag(),
  fileWriteStreaming: flag(),
  shellSnapshotV2: flag(),
  windowsMxc: flag(),
  linuxRootWritePreservesDevices: flag(),
  linuxApprovedRootWritePreservesRestrictions: flag(),
});
export type EnvironmentCapabilities = z.infer<typeof EnvironmentCapabilities>;

/** What `environment/info` returns and `initialize` carries as `environmentInfo`. */
export const EnvironmentInfo = z.object({
  shell: ShellInfo,
  executorVersion: z.string().default('0.0.0'),
  providerId: z.string().optional(),
  cwd: PathUri.nullish(),
  userHomeDir: PathUri.nullish(),
  platformOs: z.string().nullish(),
  prependPathDirs: z.array(PathUri).optional(),
  temporaryDirectories: z.array(PathUri).optional(),
  tempDir: PathUri.nullish(),
  capabilities: EnvironmentCapabilities.prefault({}),
});
export type EnvironmentInfo = z.infer<typeof EnvironmentInfo>;
/** `EnvironmentInfo` as it travels (before the client's defaults): what an executor sends. */
export type EnvironmentInfoWire = z.input<typeof EnvironmentInfo>;

/**
 * Params of the `environment/info` request (client → executor); its entry in `METHODS` ties it to
 * the method.
 */
export const EnvironmentInfoParams = NoParams;
export type EnvironmentInfoParams = z.infer<typeof EnvironmentInfoParams>;
/** Result of the `environment/info` request; its entry in `METHODS` ties it to the method. */
export const EnvironmentInfoResult = EnvironmentInfo;
export type EnvironmentInfoResult = z.infer<typeof EnvironmentInfoResult>;

/**
 * Params of the `environment/status` request (client → executor); its entry in `METHODS` ties it to
 * the method.
 */
export const EnvironmentStatusParams = NoParams;
export type EnvironmentStatusParams = z.infer<typeof EnvironmentStatusParams>;
/** Result of the `environment/status` request; its entry in `METHODS` ties it to the method. */
export const EnvironmentStatusResult = z.object({ status: z.literal('ready') });
export type EnvironmentStatusResult = z.infer<typeof EnvironmentStatusResult>;

/**
 * Params of the `environmentConfig/read` request (client → executor); its entry in `METHODS` ties
 * it to the method.
 */
export const EnvironmentConfigReadParams = z.object({
  cwd: PathUri,
  /** Each entry is one candidate path, as path segments; at least one path overall is required. */
  configPaths: z.array(z.array(z.string())),
  requirementsPaths: z.array(z.array(z.string())),
});
export type EnvironmentConfigReadParams = z.infer<typeof EnvironmentConfigReadParams>;

/**
 * One configuration or requirements layer of `environmentConfig/read`: its source and the requested
 * TOML values.
 */
export const EnvironmentConfigLayer = z.object({
  source: z.unknown(),
  baseDir: z.unknown(),
  toml: z.string(),
});
export type EnvironmentConfigLayer = z.infer<typeof EnvironmentConfigLayer>;

/** The config and requirements layers of `environmentConfig/read`, lowest precedence first. */
export const EnvironmentConfigLayers = z.object({
  layers: z.array(EnvironmentConfigLayer),
  cloudInsertionIndex: z.number().int(),
});
export type EnvironmentConfigLayers = z.infer<typeof EnvironmentConfigLayers>;

/** Result of the `environmentConfig/read` request; its entry in `METHODS` ties it to the method. */
export const EnvironmentConfigReadResult = z.object({
  userHomeDir: PathUri.nullable(),
  codexHomeDir: PathUri,
  hostname: z.string().nullable(),
  config: EnvironmentConfigLayers,
  requirements: EnvironmentConfigLayers,
});
export type EnvironmentConfigReadResult = z.infer<typeof EnvironmentConfigReadResult>;
