/**
 * Sandbox-related pass-through structures (spec/protocol.md §6.9, §7.11). The client treats
 * them as opaque JSON chosen by its caller; the executor only needs to recognise them.
 */
import * as z from 'zod';

/**
 * `FileSystemSandboxContext`: camelCase keys outside, a snake_case permission profile inside.
 * Kept opaque (all keys preserved) so a caller's object travels byte-for-byte.
 */
export const FileSystemSandboxContext = z.record(z.string(), z.unknown());
export type FileSystemSandboxContext = z.infer<typeof FileSystemSandboxContext>;
