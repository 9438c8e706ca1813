/**
 * `fs/watchMissing` and its `fs/missingChanged` notification (capability `fsWatchMissing`;
 * semantics probed on 0.169.0, spec/fixtures/FINDINGS.md "fs/watchMissing"): one watch per
 * connection; each new `watchId` must be above every earlier one; the watch fires once.
 */
import * as z from 'zod';
import { PathUri } from './pathUri.js';

const WatchId = z.number().int().nonnegative();

export const FsWatchMissingParams = z.object({
  watchId: WatchId,
  /** 1 to 64 paths that do not exist yet. */
  missing: z.array(PathUri),
  /** A path that exists now; its change or removal fires the watch too. */
  present: PathUri.nullish(),
});
export type FsWatchMissingParams = z.infer<typeof FsWatchMissingParams>;

/** `watching: false`: nothing to watch (see FINDINGS), and no notification will come. */
export const FsWatchMissingResult = z.object({ watching: z.boolean() });
export type FsWatchMissingResult = z.infer<typeof FsWatchMissingResult>;

export const FsMissingChangedNotification = z.object({ watchId: WatchId });
export type FsMissingChangedNotification = z.infer<typeof FsMissingChangedNotification>;
