/** Plain twin of src/cli/fastpath/codeCache.ts: the CLI's ES module bundle, compiled afresh. */

type Main = (argv: string[]) => Promise<number>;

/** Runs `execrx <argv>` and resolves with its exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const { main } = (await import(new URL('../main.bundle.js', import.meta.url).href)) as {
    main: Main;
  };
  return main(argv);
}
