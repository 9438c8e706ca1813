/**
 * Errors of the Noise harness transport (noise-relay.md §6.4, §7.1). They extend the shared
 * taxonomy, so callers that only know `DisconnectedError` / `ProtocolError` still classify
 * them correctly (a reset or a lost relay is a disconnect; a broken relay frame a protocol
 * fault).
 */
import { DisconnectedError, ProtocolError } from '../protocol/errors.js';

/** codex's fixed local text for a relay `reset` (the remote reason is unauthenticated). */
const NOISE_RELAY_STREAM_RESET = 'Noise relay stream reset';

/**
 * The executor reset our stream. Before the handshake completed (`duringHandshake`) this is
 * how every refusal looks: a wrong executor key, a mismatched prologue, an authorization the
 * registry rejected, or an executor cooling down after too many failed handshakes. Fetch a
 * fresh connect bundle and try again.
 */
export class NoiseRelayStreamResetError extends DisconnectedError {
  constructor(readonly duringHandshake: boolean) {
    super(NOISE_RELAY_STREAM_RESET);
  }
}

/**
 * The relay socket ended (close frame, EOF, read error) while the harness was still waiting
 * for the executor's handshake answer.
 */
export class NoiseRelayHandshakeDisconnectedError extends DisconnectedError {}

/**
 * The relay broke the harness protocol: a text frame, an undecodable frame, data before the
 * handshake completed, a second handshake, an undecryptable record. `detail` is codex's text.
 */
export class NoiseRelayHarnessProtocolError extends ProtocolError {}
