/**
 * Hand-written equivalents of a few schemas that sit on every call's path.
 *
 * Contract: each check returns exactly what its schema's `parse` would (unknown keys dropped)
 * for a value the schema accepts, and undefined for anything else; callers then run the schema
 * for its error message. So a check can only make a call cheaper, never change what it
 * accepts. spec/protocol/fastpath/fastChecks.spec.ts holds every check to its schema and to the plain
 * twin (bench/plain/protocol/fastpath/fastChecks.ts); why they exist
 * (a cold zod pass) and what they save is in docs/performance.md ("Fast paths").
 */
import type { z } from 'zod';
import { FsGetMetadataResult } from '../fs.js';
import {
  ProcessClosedNotification,
  ProcessExitedNotification,
  ProcessOutputNotification,
  ProcessStartResult,
} from '../process.js';
import { isStandardBase64 } from '../base64.js';

type FastCheck = (value: unknown) => unknown;

const checks = new Map<z.ZodType, FastCheck>();

function register<S extends z.ZodType>(
  schema: S,
  check: (value: unknown) => z.output<S> | undefined,
) {
  checks.set(schema, check);
}

/** The hand-written check of `schema`, if it has one. */
export function fastCheckFor<S extends z.ZodType>(
  schema: S,
): ((value: unknown) => z.output<S> | undefined) | undefined {
  return checks.get(schema) as ((value: unknown) => z.output<S> | undefined) | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

register(FsGetMetadataResult, (value) => {
  if (!isRecord(value)) return undefined;
  const { isDirectory, isFile, isSymlink, size, createdAtMs, modifiedAtMs } = value;
  if (
    typeof isDirectory !== 'boolean' ||
    typeof isFile !== 'boolean' ||
    typeof isSymlink !== 'boolean' ||
    !Number.isSafeInteger(size) ||
    (size as number) < 0 ||
    !Number.isSafeInteger(createdAtMs) ||
    !Number.isSafeInteger(modifiedAtMs)
  ) {
    return undefined;
  }
  return {
    isDirectory,
    isFile,
    isSymlink,
    size: size as number,
    createdAtMs: createdAtMs as number,
    modifiedAtMs: modifiedAtMs as number,
  };
});

const SANDBOX_TYPES: ReadonlySet<unknown> = new Set(
  ProcessStartResult.shape.sandboxType.unwrap().unwrap().options,
);
const OUTPUT_STREAMS: ReadonlySet<unknown> = new Set(
  ProcessOutputNotification.shape.stream.options,
);

/** A `seq`: a safe integer from 1. */
function isSeq(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}

register(ProcessStartResult, (value) => {
  if (!isRecord(value) || typeof value.processId !== 'string') return undefined;
  const { processId, sandboxType } = value;
  if (sandboxType === undefined) return { processId };
  if (sandboxType !== null && !SANDBOX_TYPES.has(sandboxType)) return undefined;
  return { processId, sandboxType: sandboxType as ProcessStartResult['sandboxType'] };
});

register(ProcessOutputNotification, (value) => {
  if (!isRecord(value)) return undefined;
  const { processId, seq, stream, chunk } = value;
  if (typeof processId !== 'string' || !isSeq(seq) || !OUTPUT_STREAMS.has(stream)) return undefined;
  if (typeof chunk !== 'string' || !isStandardBase64(chunk)) return undefined;
  return { processId, seq, stream: stream as ProcessOutputNotification['stream'], chunk };
});

register(ProcessExitedNotification, (value) => {
  if (!isRecord(value)) return undefined;
  const { processId, seq, exitCode, sandboxDenied } = value;
  if (typeof processId !== 'string' || !isSeq(seq) || !Number.isSafeInteger(exitCode)) {
    return undefined;
  }
  const exited = { processId, seq, exitCode: exitCode as number };
  if (sandboxDenied === undefined) return exited;
  if (sandboxDenied !== null && typeof sandboxDenied !== 'boolean') return undefined;
  return { ...exited, sandboxDenied };
});

register(ProcessClosedNotification, (value) => {
  if (!isRecord(value)) return undefined;
  const { processId, seq } = value;
  if (typeof processId !== 'string' || !isSeq(seq)) return undefined;
  return { processId, seq };
});
