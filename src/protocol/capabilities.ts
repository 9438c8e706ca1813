/**
 * Executor-side plugin/skill discovery (spec/protocol.md §7.10). Only the envelope is typed;
 * manifests and findings are passed through as JSON.
 */
import * as z from 'zod';
import { PathUri } from './pathUri.js';
import { FileSystemSandboxContext } from './sandbox.js';

/**
 * A directory the client asks `capabilityRoots/discoverV1` to look in, under the client's id for it
 * and an optional sandbox.
 */
export const CapabilityRoot = z.object({
  id: z.string(),
  path: PathUri,
  sandbox: FileSystemSandboxContext.nullish(),
});
export type CapabilityRoot = z.infer<typeof CapabilityRoot>;

/**
 * Params of the `capabilityRoots/discoverV1` request (client → executor); its entry in `METHODS`
 * ties it to the method.
 */
export const CapabilityRootsDiscoverV1Params = z.object({ roots: z.array(CapabilityRoot) });
export type CapabilityRootsDiscoverV1Params = z.infer<typeof CapabilityRootsDiscoverV1Params>;

/** A file found by capability discovery, with its text contents. */
export const TextFile = z.object({ path: PathUri, contents: z.string() });
export type TextFile = z.infer<typeof TextFile>;

/** What capability discovery found under one root (instructions, skills, …). */
export const CapabilityRootFindings = z.object({
  id: z.string(),
  path: PathUri,
  plugin: z.unknown().optional(),
  skills: z.array(z.unknown()),
  namespaceManifests: z.array(z.unknown()),
  warnings: z.array(z.string()),
  error: z.string().nullish(),
});
export type CapabilityRootFindings = z.infer<typeof CapabilityRootFindings>;

/**
 * Result of the `capabilityRoots/discoverV1` request; its entry in `METHODS` ties it to the method.
 */
export const CapabilityRootsDiscoverV1Result = z.object({ roots: z.array(CapabilityRootFindings) });
export type CapabilityRootsDiscoverV1Result = z.infer<typeof CapabilityRootsDiscoverV1Result>;

/** `capabilities/discoverV2` (0.169.0): only `cwd` is known to be required. */
export const CapabilitiesDiscoverV2Params = z.object({ cwd: PathUri });
export type CapabilitiesDiscoverV2Params = z.infer<typeof CapabilitiesDiscoverV2Params>;

/**
 * Result of the `capabilities/discoverV2` request; its entry in `METHODS` ties it to the method.
 */
export const CapabilitiesDiscoverV2Result = z.object({
  plugins: z.array(z.unknown()),
  skills: z.array(z.unknown()),
  warnings: z.array(z.unknown()),
});
export type CapabilitiesDiscoverV2Result = z.infer<typeof CapabilitiesDiscoverV2Result>;
