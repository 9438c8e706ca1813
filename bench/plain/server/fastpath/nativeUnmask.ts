/** Plain twin of src/server/fastpath/nativeUnmask.ts: the byte loop, always. */

/**
 * XORs `data[start, end)` with the 4-byte masking key just before it (`data[start - 4, start)`);
 * true when every unmasked byte is ASCII (below 0x80).
 */
export function unmaskPayload(data: Buffer, start: number, end: number): boolean {
  let ascii = true;
  for (let index = start; index < end; index++) {
    data[index] = (data[index] as number) ^ (data[start - 4 + ((index - start) % 4)] as number);
    if ((data[index] as number) >= 0x80) ascii = false;
  }
  return ascii;
}
