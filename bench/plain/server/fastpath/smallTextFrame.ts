/** Plain twin of src/server/fastpath/smallTextFrame.ts: every reply takes the general path. */
export function smallTextFrame(_message: string): string | undefined {
  return undefined;
}
