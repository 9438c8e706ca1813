/** Typed faults the rendezvous reports (in events and counters) instead of crashing. */
import { ExecServerError } from '../protocol/errors.js';

/** Why the rendezvous dropped one WebSocket message instead of routing it. */
export type DroppedFrameCause =
  /** A text message: relay frames are binary protobuf. */
  | 'text_message'
  /** Not a valid `RelayMessageFrame` (undecodable, wrong version, missing fields). */
  | 'malformed_frame'
  /** A harness frame for a stream this socket never claimed with `resume`. */
  | 'unclaimed_stream'
  /** A harness `resume` for a stream id another harness socket holds. */
  | 'stream_in_use'
  /** An executor frame for a stream no harness holds (it went away). */
  | 'unknown_stream'
  /** No executor is attached, or the environment already has its maximum of streams. */
  | 'no_capacity';

/**
 * One message the rendezvous could not route. Never fatal for the socket: the rendezvous
 * drops the message, counts it and, where a stream is known, resets that stream.
 */
export class RendezvousFrameError extends ExecServerError {
  constructor(
    readonly reason: DroppedFrameCause,
    readonly from: 'environment' | 'harness',
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`rendezvous dropped a frame from the ${from} socket (${reason}): ${detail}`, options);
  }
}
