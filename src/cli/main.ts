/** Entry point of the `execrx` command. */
export async function main(argv: string[]): Promise<number> {
  process.stderr.write(`execrx: no commands yet (${argv.join(' ')})\n`);
  return 2;
}
