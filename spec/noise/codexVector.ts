import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const vectorSchema = z.object({
  noise_protocol_name_hashed_into_h: z.string(),
  suite_label_in_public_key_json: z.string(),
  rng_draws_in_order: z.array(
    z.object({ label: z.string(), bytes: z.number(), first_counter: z.string() }),
  ),
  environment_id: z.string(),
  executor_registration_id: z.string(),
  stream_id: z.string(),
  prologue_hex: z.string(),
  harness: z.object({
    x25519_private_hex: z.string(),
    x25519_public_hex: z.string(),
    mlkem768_seed_d_z_hex: z.string(),
    mlkem768_public_hex: z.string(),
    public_key_json: z.record(z.string(), z.string()),
  }),
  executor: z.object({
    x25519_private_hex: z.string(),
    x25519_public_hex: z.string(),
    mlkem768_seed_d_z_hex: z.string(),
    mlkem768_public_hex: z.string(),
    public_key_json: z.record(z.string(), z.string()),
  }),
  harness_key_authorization: z.string(),
  msg1_len: z.number(),
  msg1_hex: z.string(),
  msg2_len: z.number(),
  msg2_hex: z.string(),
  handshake_hash_hex: z.string(),
  transport: z.array(
    z.object({
      direction: z.string(),
      nonce: z.number(),
      plaintext_record_hex: z.string(),
      ciphertext_hex: z.string(),
    }),
  ),
});

export type CodexVector = z.infer<typeof vectorSchema>;

/**
 * The shared wire vector: `shared/vectors/noise-hybrid-ik-codex.json` beside the repository
 * when present (so a corrected vector is picked up), else the copy in `spec/fixtures/noise/`.
 */
export function loadCodexVector(): CodexVector {
  const shared = fileURLToPath(
    new URL('../../../shared/vectors/noise-hybrid-ik-codex.json', import.meta.url),
  );
  const copy = fileURLToPath(
    new URL('../fixtures/noise/noise-hybrid-ik-codex.json', import.meta.url),
  );
  const path = existsSync(shared) ? shared : copy;
  return vectorSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
}
