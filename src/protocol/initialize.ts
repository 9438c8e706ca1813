/** `initialize` / `initialized` (spec/protocol.md §4). */
import * as z from 'zod';
import { EnvironmentInfo } from './environment.js';

/**
 * Params of the `initialize` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const InitializeParams = z.object({
  /** Ignored by the executor; upstream sends `codex-core` or `codex-environment`. */
  clientName: z.string(),
  /** Explicit `null` on a fresh connect; the saved session id on resume. */
  resumeSessionId: z.string().nullable().default(null),
});
export type InitializeParams = z.infer<typeof InitializeParams>;

/** Result of the `initialize` request; its entry in `METHODS` ties it to the method. */
export const InitializeResult = z.object({
  sessionId: z.string(),
  /** Present on 0.169.0; older executors omit it (omitted, never null). */
  environmentInfo: EnvironmentInfo.optional(),
});
export type InitializeResult = z.infer<typeof InitializeResult>;

/** `initialized` is a notification with params `{}`. */
export const InitializedNotification = z.object({});
export type InitializedNotification = z.infer<typeof InitializedNotification>;
