/** A command line the CLI cannot make sense of; `main` prints it with a hint and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  constructor(
    message: string,
    /** The command whose `--help` the hint points to (none: the top-level help). */
    readonly command?: string,
  ) {
    super(message);
  }
}
