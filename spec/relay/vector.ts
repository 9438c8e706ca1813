/** The relay part of the shared codex wire vector (copied from shared/vectors). */
import { readFileSync } from 'node:fs';

interface RelayVector {
  stream_id: string;
  msg1_hex: string;
  msg2_hex: string;
  transport: { plaintext_record_hex: string; plaintext_json: string; ciphertext_hex: string }[];
  relay_frames_protobuf_hex: Record<
    | 'harness_resume'
    | 'harness_handshake'
    | 'executor_handshake'
    | 'harness_data_seq0'
    | 'executor_data_seq0'
    | 'executor_reset',
    string
  >;
}

export const vector: RelayVector = JSON.parse(
  readFileSync(new URL('./fixtures/noise-hybrid-ik-codex-relay.json', import.meta.url), 'utf8'),
) as RelayVector;

export const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, 'hex'));
export const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
