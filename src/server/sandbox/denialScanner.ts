/**
 * `sandboxDenied` of a sandboxed process, decided as codex decides it
 * (`is_likely_sandbox_denied`): a non-zero exit whose output names a typical denial
 * ("read-only file system", "operation not permitted", …), or death by SIGSYS (seccomp).
 * Exit codes 2, 126 and 127 without such words are ordinary shell failures.
 * Guarded by spec/server/sandbox/denialScanner.spec.ts.
 */

const KEYWORDS = [
  'operation not permitted',
  'permission denied',
  'read-only file system',
  'seccomp',
  'sandbox',
  'landlock',
  'failed to write file',
] as const;

/** Bytes kept from the end of one chunk so a keyword split across chunks is still seen. */
const OVERLAP = Math.max(...KEYWORDS.map((keyword) => keyword.length)) - 1;
const SIGSYS_EXIT = 128 + 31;

export class DenialScanner {
  private sawKeyword = false;
  private tail = '';

  /** Looks at one chunk of the process's output (any stream). */
  observe(chunk: Buffer): void {
    if (this.sawKeyword) return;
    const text = this.tail + chunk.toString('latin1').toLowerCase();
    if (KEYWORDS.some((keyword) => text.includes(keyword))) {
      this.sawKeyword = true;
      this.tail = '';
      return;
    }
    this.tail = text.slice(-OVERLAP);
  }

  /** The verdict once the process has exited with `exitCode`. */
  denied(exitCode: number): boolean {
    if (exitCode === 0) return false;
    return this.sawKeyword || exitCode === SIGSYS_EXIT;
  }
}
