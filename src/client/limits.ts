/** Client-side limits and timers of one exec-server session (spec/protocol.md §18.1). */

/** Reorder buffer: out-of-order process events held per process. */
export const MAX_PENDING_PROCESS_EVENTS = 256;
/** Reorder buffer bytes per process; also the largest single process event accepted. */
export const MAX_PENDING_PROCESS_EVENT_BYTES = 1024 * 1024;
/** Replay history a late `events$` subscriber receives: at most this many events… */
export const PROCESS_EVENT_HISTORY_CAPACITY = 256;
/** …and at most this many retained output bytes. */
export const PROCESS_EVENT_HISTORY_BYTES = 1024 * 1024;

/** Largest decoded HTTP body delta, and its base64 length (wire limits, protocol/http.ts). */
export { MAX_HTTP_BODY_DELTA_BASE64_CHARS, MAX_HTTP_BODY_DELTA_BYTES } from '../protocol/http.js';
/** Frames queued per HTTP body stream before the consumer reads them. */
export const HTTP_BODY_DELTA_CHANNEL_CAPACITY = 256;
/** Bytes queued across all HTTP body streams of one session. */
export const MAX_QUEUED_HTTP_BODY_BYTES = 16 * 1024 * 1024;

/** Budget for `initialize` + `initialized`. */
export const INITIALIZE_TIMEOUT_MS = 10_000;
/** Budget for an uncached `environment/info`. */
export const ENVIRONMENT_INFO_TIMEOUT_MS = 30_000;
/** Budget for the live `environment/status` probe. */
export const ENVIRONMENT_STATUS_TIMEOUT_MS = 10_000;

/** `fs/readBlock` length the client asks for. */
export const FILE_READ_CHUNK_SIZE = 1024 * 1024;
/** Largest block `writeFileStream` sends per `fs/writeBlock` (bigger chunks are split). */
export const FILE_WRITE_CHUNK_SIZE = 1024 * 1024;

/** Largest page of retained output one recovery `process/read` asks for (`maxBytes`). */
export const RECOVERY_READ_PAGE_BYTES = 128 * 1024;
/** Bytes an Observable source of `writeFileStream` may run ahead of the executor. */
export const WRITE_STREAM_MAX_QUEUED_BYTES = 64 * 1024 * 1024;
