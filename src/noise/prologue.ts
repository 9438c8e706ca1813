import { writeU64BigEndian } from './bytes.js';
import { NOISE_PROLOGUE_DOMAIN } from './constants.js';

export interface NoisePrologueParts {
  readonly environmentId: string;
  readonly executorRegistrationId: string;
  readonly streamId: string;
}

/**
 * The handshake prologue that binds a handshake to one environment, registration and relay
 * stream: domain, environment id, registration id, stream id, each as an 8-byte big-endian
 * length followed by its UTF-8 bytes (u64, not u32: 4-byte drafts never shipped). Both sides
 * must compute the same bytes or message 1 fails to decrypt.
 */
export function prologue(parts: NoisePrologueParts): Uint8Array {
  const encoder = new TextEncoder();
  const fields = [
    NOISE_PROLOGUE_DOMAIN,
    parts.environmentId,
    parts.executorRegistrationId,
    parts.streamId,
  ].map((field) => encoder.encode(field));
  const out = new Uint8Array(fields.reduce((total, field) => total + 8 + field.length, 0));
  let offset = 0;
  for (const field of fields) {
    writeU64BigEndian(out, offset, field.length);
    out.set(field, offset + 8);
    offset += 8 + field.length;
  }
  return out;
}
