/**
 * `fs/*` requests (spec/protocol.md §7; `fs/writeBlock` and `fs/open` `mode` confirmed on
 * 0.169.0). Every path is a `file:` URI. `sandbox` is sent as explicit `null` when unused;
 * `followSymlinks` is omitted when absent.
 */
import * as z from 'zod';
import { Base64 } from './base64.js';
import { PathUri } from './pathUri.js';
import { FileSystemSandboxContext } from './sandbox.js';

const sandbox = () => FileSystemSandboxContext.nullable().default(null);
const EmptyResult = z.object({});

/**
 * Params of the `fs/readFile` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsReadFileParams = z.object({
  path: PathUri,
  followSymlinks: z.boolean().optional(),
  sandbox: sandbox(),
});
export type FsReadFileParams = z.infer<typeof FsReadFileParams>;
/** Result of the `fs/readFile` request; its entry in `METHODS` ties it to the method. */
export const FsReadFileResult = z.object({ dataBase64: Base64 });
export type FsReadFileResult = z.infer<typeof FsReadFileResult>;

/**
 * Params of the `fs/writeFile` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsWriteFileParams = z.object({
  path: PathUri,
  dataBase64: Base64,
  followSymlinks: z.boolean().optional(),
  sandbox: sandbox(),
});
export type FsWriteFileParams = z.infer<typeof FsWriteFileParams>;
/** Result of the `fs/writeFile` request; its entry in `METHODS` ties it to the method. */
export const FsWriteFileResult = EmptyResult;
export type FsWriteFileResult = z.infer<typeof FsWriteFileResult>;

/**
 * Params of the `fs/createDirectory` request (client → executor); its entry in `METHODS` ties it to
 * the method.
 */
export const FsCreateDirectoryParams = z.object({
  path: PathUri,
  /** `null` means the executor default: recursive (mkdir -p). */
  recursive: z.boolean().nullable().default(null),
  followSymlinks: z.boolean().optional(),
  sandbox: sandbox(),
});
export type FsCreateDirectoryParams = z.infer<typeof FsCreateDirectoryParams>;
/** Result of the `fs/createDirectory` request; its entry in `METHODS` ties it to the method. */
export const FsCreateDirectoryResult = EmptyResult;
export type FsCreateDirectoryResult = z.infer<typeof FsCreateDirectoryResult>;

/**
 * Params of the `fs/getMetadata` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsGetMetadataParams = z.object({
  path: PathUri,
  followSymlinks: z.boolean().optional(),
  sandbox: sandbox(),
});
export type FsGetMetadataParams = z.infer<typeof FsGetMetadataParams>;
/** Result of the `fs/getMetadata` request; its entry in `METHODS` ties it to the method. */
export const FsGetMetadataResult = z.object({
  isDirectory: z.boolean(),
  isFile: z.boolean(),
  /** From lstat; the other fields follow the link. */
  isSymlink: z.boolean(),
  size: z.number().int().min(0),
  /** Milliseconds since the epoch; 0 when the platform has no birth time. */
  createdAtMs: z.number().int(),
  modifiedAtMs: z.number().int(),
});
export type FsGetMetadataResult = z.infer<typeof FsGetMetadataResult>;

/**
 * Params of the `fs/canonicalize` request (client → executor); its entry in `METHODS` ties it to
 * the method.
 */
export const FsCanonicalizeParams = z.object({ path: PathUri, sandbox: sandbox() });
export type FsCanonicalizeParams = z.infer<typeof FsCanonicalizeParams>;
/** Result of the `fs/canonicalize` request; its entry in `METHODS` ties it to the method. */
export const FsCanonicalizeResult = z.object({ path: PathUri });
export type FsCanonicalizeResult = z.infer<typeof FsCanonicalizeResult>;

/**
 * Params of the `fs/readDirectory` request (client → executor); its entry in `METHODS` ties it to
 * the method.
 */
export const FsReadDirectoryParams = z.object({ path: PathUri, sandbox: sandbox() });
export type FsReadDirectoryParams = z.infer<typeof FsReadDirectoryParams>;
/**
 * One entry of `fs/readDirectory`: its file name, and whether it is a directory or a file (both
 * false for anything else).
 */
export const FsReadDirectoryEntry = z.object({
  fileName: z.string(),
  isDirectory: z.boolean(),
  isFile: z.boolean(),
});
export type FsReadDirectoryEntry = z.infer<typeof FsReadDirectoryEntry>;
/** Result of the `fs/readDirectory` request; its entry in `METHODS` ties it to the method. */
export const FsReadDirectoryResult = z.object({ entries: z.array(FsReadDirectoryEntry) });
export type FsReadDirectoryResult = z.infer<typeof FsReadDirectoryResult>;

/**
 * Bounds of one `fs/walk`: depth, directories and entries visited; the executor stops at the first
 * reached and sets `truncated`.
 */
export const FsWalkOptions = z.object({
  maxDepth: z.number().int().min(0),
  maxDirectories: z.number().int().min(0),
  maxEntries: z.number().int().min(0),
  followDirectorySymlinks: z.boolean(),
  pruneHiddenDirectories: z.boolean().optional(),
});
export type FsWalkOptions = z.infer<typeof FsWalkOptions>;

/**
 * Params of the `fs/walk` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsWalkParams = z.object({ path: PathUri, options: FsWalkOptions, sandbox: sandbox() });
export type FsWalkParams = z.infer<typeof FsWalkParams>;
/** What an `fs/walk` entry is. */
export const FsWalkEntryKind = z.enum(['directory', 'file']);
export type FsWalkEntryKind = z.infer<typeof FsWalkEntryKind>;
/** One path `fs/walk` found, as a `file:` URI, with its kind. */
export const FsWalkEntry = z.object({ path: PathUri, kind: FsWalkEntryKind });
export type FsWalkEntry = z.infer<typeof FsWalkEntry>;
/** A path `fs/walk` could not read, with the executor's message; the walk goes on. */
export const FsWalkError = z.object({ path: PathUri, message: z.string() });
export type FsWalkError = z.infer<typeof FsWalkError>;
/** Result of the `fs/walk` request; its entry in `METHODS` ties it to the method. */
export const FsWalkResult = z.object({
  entries: z.array(FsWalkEntry),
  errors: z.array(FsWalkError),
  truncated: z.boolean(),
});
export type FsWalkResult = z.infer<typeof FsWalkResult>;

/**
 * Params of the `fs/remove` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsRemoveParams = z.object({
  path: PathUri,
  /** `null` = executor default (true). */
  recursive: z.boolean().nullable().default(null),
  /** `null` = executor default (true). */
  force: z.boolean().nullable().default(null),
  followSymlinks: z.boolean().optional(),
  sandbox: sandbox(),
});
export type FsRemoveParams = z.infer<typeof FsRemoveParams>;
/** Result of the `fs/remove` request; its entry in `METHODS` ties it to the method. */
export const FsRemoveResult = EmptyResult;
export type FsRemoveResult = z.infer<typeof FsRemoveResult>;

/**
 * Params of the `fs/copy` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsCopyParams = z.object({
  sourcePath: PathUri,
  destinationPath: PathUri,
  recursive: z.boolean(),
  sandbox: sandbox(),
});
export type FsCopyParams = z.infer<typeof FsCopyParams>;
/** Result of the `fs/copy` request; its entry in `METHODS` ties it to the method. */
export const FsCopyResult = EmptyResult;
export type FsCopyResult = z.infer<typeof FsCopyResult>;

/** `read` opens an existing file; `replace` opens a writable handle (capability `fileWriteStreaming`). */
export const FsOpenMode = z.enum(['read', 'replace']);
export type FsOpenMode = z.infer<typeof FsOpenMode>;

/**
 * Params of the `fs/open` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsOpenParams = z.object({
  /** Client-chosen, at most 32 bytes (upstream: a dash-less UUID). */
  handleId: z.string(),
  path: PathUri,
  mode: FsOpenMode.default('read'),
  sandbox: sandbox(),
});
export type FsOpenParams = z.infer<typeof FsOpenParams>;
/** Result of the `fs/open` request; its entry in `METHODS` ties it to the method. */
export const FsOpenResult = z.object({ handleId: z.string() });
export type FsOpenResult = z.infer<typeof FsOpenResult>;

/**
 * Params of the `fs/readBlock` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsReadBlockParams = z.object({
  handleId: z.string(),
  offset: z.number().int().min(0),
  /** 1..=1048576. */
  len: z.number().int().min(0),
});
export type FsReadBlockParams = z.infer<typeof FsReadBlockParams>;
/** Result of the `fs/readBlock` request; its entry in `METHODS` ties it to the method. */
export const FsReadBlockResult = z.object({ chunk: Base64, eof: z.boolean() });
export type FsReadBlockResult = z.infer<typeof FsReadBlockResult>;

/**
 * Params of the `fs/writeBlock` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsWriteBlockParams = z.object({
  handleId: z.string(),
  offset: z.number().int().min(0),
  chunk: Base64,
});
export type FsWriteBlockParams = z.infer<typeof FsWriteBlockParams>;
/** Result of the `fs/writeBlock` request; its entry in `METHODS` ties it to the method. */
export const FsWriteBlockResult = EmptyResult;
export type FsWriteBlockResult = z.infer<typeof FsWriteBlockResult>;

/**
 * Params of the `fs/close` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const FsCloseParams = z.object({ handleId: z.string() });
export type FsCloseParams = z.infer<typeof FsCloseParams>;
/** Result of the `fs/close` request; its entry in `METHODS` ties it to the method. */
export const FsCloseResult = EmptyResult;
export type FsCloseResult = z.infer<typeof FsCloseResult>;
