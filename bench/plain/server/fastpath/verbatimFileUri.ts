/** Plain twin of src/server/fastpath/verbatimFileUri.ts: every URI goes to the URL parser. */
export function verbatimFilePath(_uri: string): string | undefined {
  return undefined;
}
