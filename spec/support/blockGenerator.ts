/**
 * Test helper: deterministic output driven by stdin, for exactly-once checks. A child running
 * `BLOCK_GENERATOR` writes block `k` to stdout for each stdin line `k`; `block(k)` is the same
 * bytes (an AES-256-CTR keystream keyed by sha256(k)), so the sha256 of the whole output proves
 * that every line landed once and in order and that every output byte arrived once and in order.
 */
import { createCipheriv, createHash } from 'node:crypto';

export const BLOCK_BYTES = 256 * 1024;

/** Block `index` of the output. */
export function block(index: number): Buffer {
  const key = createHash('sha256').update(String(index)).digest();
  return createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(BLOCK_BYTES));
}

/** The child's script (`node -e`), with `BLOCK_BYTES` in its environment. */
export const BLOCK_GENERATOR = `
const crypto = require('node:crypto');
const size = Number(process.env.BLOCK_BYTES);
let pending = '';
process.stdin.on('data', (data) => {
  pending += data;
  for (let end = pending.indexOf('\\n'); end >= 0; end = pending.indexOf('\\n')) {
    const key = crypto.createHash('sha256').update(pending.slice(0, end)).digest();
    pending = pending.slice(end + 1);
    process.stdout.write(crypto.createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(size)));
  }
});
`;
