import { ProtocolError } from '../protocol/errors.js';

/**
 * A relay frame, record or sequence number broke the Noise relay protocol (noise-relay.md §7.2).
 * The stream it arrived on cannot continue: close it (the harness reconnects with a fresh
 * stream). `detail` carries codex's exact text, e.g. "relay message frame is missing body".
 */
export class RelayProtocolError extends ProtocolError {}
