/**
 * `process/*` requests and notifications (spec/protocol.md §6).
 *
 * Null-vs-omitted follows serde: `X.nullable().default(null)` marks a field the client sends
 * as explicit `null` (required in the output type, tolerated absent on input);
 * `.optional()` marks a field omitted when absent.
 */
import * as z from 'zod';
import { Base64 } from './base64.js';
import { PathUri } from './pathUri.js';
import { FileSystemSandboxContext } from './sandbox.js';

/** Client-chosen logical process handle (not an OS pid). */
export const ProcessId = z.string();
export type ProcessId = z.infer<typeof ProcessId>;

/**
 * Which of the executor's own variables an `ExecEnvPolicy` starts from: all, none, or the core set
 * (`PATH`, `HOME`, …).
 */
export const EnvInherit = z.enum(['all', 'none', 'core']);
export type EnvInherit = z.infer<typeof EnvInherit>;

/** All five fields are required when a policy is sent (§6.3). */
export const ExecEnvPolicy = z.object({
  inherit: EnvInherit,
  ignoreDefaultExcludes: z.boolean(),
  exclude: z.array(z.string()),
  set: z.record(z.string(), z.string()),
  includeOnly: z.array(z.string()),
});
export type ExecEnvPolicy = z.infer<typeof ExecEnvPolicy>;

/**
 * Ids a harness attaches to `process/start` to say which thread and tool call a process belongs to.
 */
export const ProcessMetadata = z.object({
  threadId: z.string().optional(),
  toolCallId: z.string().optional(),
});
export type ProcessMetadata = z.infer<typeof ProcessMetadata>;

/**
 * A shell snapshot for `process/start`: the scope it belongs to and the shell it was taken with.
 */
export const ShellSnapshot = z.object({
  scopeId: z.string(),
  shell: z.object({ name: z.string(), path: z.string() }),
});
export type ShellSnapshot = z.infer<typeof ShellSnapshot>;

/** Loopback ports and local binding a sandboxed process may use under a managed network. */
export const ManagedNetwork = z.object({
  loopbackPorts: z.array(z.number().int().min(0).max(65535)),
  allowLocalBinding: z.boolean(),
});
export type ManagedNetwork = z.infer<typeof ManagedNetwork>;

/**
 * Executor-local network proxy launch config. `proxy` is passed through as given; on 0.169.0 it
 * needs at least `enabled: true`, `enableSocks5`, `enableSocks5Udp`, `allowUpstreamProxy`,
 * `dangerouslyAllowAllUnixSockets`, `mode` (`limited`|`full`) and `allowLocalBinding`. With a
 * non-zero `policyDecisionTimeoutMs` the executor asks the client via `network/policyRequest`.
 */
export const NetworkProxyLaunch = z.looseObject({
  proxy: z.record(z.string(), z.unknown()),
  policyDecisionTimeoutMs: z.number().int().min(0).optional(),
});
export type NetworkProxyLaunch = z.infer<typeof NetworkProxyLaunch>;

/**
 * Params of the `process/start` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const ProcessStartParams = z.object({
  processId: ProcessId,
  metadata: ProcessMetadata.optional(),
  argv: z.array(z.string()),
  cwd: PathUri,
  envPolicy: ExecEnvPolicy.nullable().default(null),
  shellSnapshot: ShellSnapshot.optional(),
  env: z.record(z.string(), z.string()),
  tty: z.boolean(),
  pipeStdin: z.boolean().default(false),
  arg0: z.string().nullable().default(null),
  sandbox: FileSystemSandboxContext.nullable().default(null),
  enforceManagedNetwork: z.boolean().default(false),
  managedNetwork: ManagedNetwork.nullable().default(null),
  /** Executor-local network proxy launch config (needs capability `networkProxyLaunch`); omitted when absent. */
  networkProxy: NetworkProxyLaunch.optional(),
});
export type ProcessStartParams = z.infer<typeof ProcessStartParams>;

/** The sandbox the executor reports it ran a process under (`process/start` result). */
export const SandboxType = z.enum([
  'none',
  'macosSeatbelt',
  'linuxSeccomp',
  'windowsRestrictedToken',
]);
export type SandboxType = z.infer<typeof SandboxType>;

/** Result of the `process/start` request; its entry in `METHODS` ties it to the method. */
export const ProcessStartResult = z.object({
  processId: ProcessId,
  /** Always present on 0.169.0; absent/null from legacy executors ("not reported"). */
  sandboxType: SandboxType.nullish(),
});
export type ProcessStartResult = z.infer<typeof ProcessStartResult>;

/** The stream a chunk of process output came from; `pty` for a terminal process. */
export const OutputStream = z.enum(['stdout', 'stderr', 'pty']);
export type OutputStream = z.infer<typeof OutputStream>;

/** One retained chunk of output in a `process/read` reply: its `seq`, stream and base64 bytes. */
export const ProcessOutputChunk = z.object({
  seq: z.number().int().min(1),
  stream: OutputStream,
  chunk: Base64,
});
export type ProcessOutputChunk = z.infer<typeof ProcessOutputChunk>;

/**
 * Params of the `process/read` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const ProcessReadParams = z.object({
  processId: ProcessId,
  afterSeq: z.number().int().min(0).nullable().default(null),
  maxBytes: z.number().int().min(0).nullable().default(null),
  waitMs: z.number().int().min(0).nullable().default(null),
});
export type ProcessReadParams = z.infer<typeof ProcessReadParams>;

/** Result of the `process/read` request; its entry in `METHODS` ties it to the method. */
export const ProcessReadResult = z.object({
  chunks: z.array(ProcessOutputChunk),
  nextSeq: z.number().int().min(1),
  exited: z.boolean(),
  exitCode: z.number().int().nullable(),
  closed: z.boolean(),
  /** Always null from the executor; only the client synthesizes it. */
  failure: z.string().nullable(),
  sandboxDenied: z.boolean().default(false),
});
export type ProcessReadResult = z.infer<typeof ProcessReadResult>;

/**
 * Params of the `process/write` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const ProcessWriteParams = z.object({
  processId: ProcessId,
  chunk: Base64,
  /** Non-empty; the executor dedupes the last 4096 per process. */
  writeId: z.string(),
});
export type ProcessWriteParams = z.infer<typeof ProcessWriteParams>;

/**
 * What became of a `process/write`: accepted, unknown process, stdin already closed, or still
 * starting.
 */
export const WriteStatus = z.enum(['accepted', 'unknownProcess', 'stdinClosed', 'starting']);
export type WriteStatus = z.infer<typeof WriteStatus>;

/** Result of the `process/write` request; its entry in `METHODS` ties it to the method. */
export const ProcessWriteResult = z.object({ status: WriteStatus });
export type ProcessWriteResult = z.infer<typeof ProcessWriteResult>;

/**
 * Signals a client may send with `process/signal`; the protocol has only `interrupt` (SIGINT to the
 * group).
 */
export const ProcessSignal = z.enum(['interrupt']);
export type ProcessSignal = z.infer<typeof ProcessSignal>;

/**
 * Params of the `process/signal` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const ProcessSignalParams = z.object({ processId: ProcessId, signal: ProcessSignal });
export type ProcessSignalParams = z.infer<typeof ProcessSignalParams>;

/** Result of the `process/signal` request; its entry in `METHODS` ties it to the method. */
export const ProcessSignalResult = z.object({});
export type ProcessSignalResult = z.infer<typeof ProcessSignalResult>;

/**
 * Params of the `process/terminate` request (client → executor); its entry in `METHODS` ties it to
 * the method.
 */
export const ProcessTerminateParams = z.object({ processId: ProcessId });
export type ProcessTerminateParams = z.infer<typeof ProcessTerminateParams>;

/** Result of the `process/terminate` request; its entry in `METHODS` ties it to the method. */
export const ProcessTerminateResult = z.object({
  /** True when the process was running (or starting) and has now been killed. */
  running: z.boolean(),
});
export type ProcessTerminateResult = z.infer<typeof ProcessTerminateResult>;

/** `process/output`: raw output bytes (the binary: up to 8192 per chunk; `execrx serve`: up to 64 KiB). */
export const ProcessOutputNotification = z.object({
  processId: ProcessId,
  seq: z.number().int().min(1),
  stream: OutputStream,
  chunk: Base64,
});
export type ProcessOutputNotification = z.infer<typeof ProcessOutputNotification>;

/** `process/exited`: output may still follow with later seqs. */
export const ProcessExitedNotification = z.object({
  processId: ProcessId,
  seq: z.number().int().min(1),
  exitCode: z.number().int(),
  /** Always set by 0.169.0; legacy executors omit it (the client then re-reads). */
  sandboxDenied: z.boolean().nullish(),
});
export type ProcessExitedNotification = z.infer<typeof ProcessExitedNotification>;

/** `process/closed`: always the last seq of a process. */
export const ProcessClosedNotification = z.object({
  processId: ProcessId,
  seq: z.number().int().min(1),
});
export type ProcessClosedNotification = z.infer<typeof ProcessClosedNotification>;
