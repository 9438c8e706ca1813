/** `execrx serve`'s sandbox options: executor-wide settings of the bubblewrap launcher. */
import type { OptionSpec, ParsedOptions } from './parseOptions.js';
import { UsageError } from './usageError.js';

export const SANDBOX_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'linux-sandbox-pid-namespace',
    kind: 'value',
    valueName: 'MODE',
    description:
      'Sandboxed processes: isolate (default; own PID namespace) or inherit (can signal other same-UID processes)',
  },
  {
    name: 'bwrap',
    kind: 'value',
    valueName: 'PATH',
    description: 'The bubblewrap binary for sandboxed requests (default: bwrap on PATH)',
  },
];

/** `--linux-sandbox-pid-namespace` and `--bwrap`: executor-wide sandbox settings. */
export async function applySandboxOptions(parsed: ParsedOptions): Promise<void> {
  const mode = parsed.values.get('linux-sandbox-pid-namespace') ?? 'isolate';
  if (mode !== 'isolate' && mode !== 'inherit') {
    throw new UsageError(
      `invalid value '${mode}' for '--linux-sandbox-pid-namespace <MODE>': expected 'isolate' or 'inherit'`,
      'serve',
    );
  }
  const bwrapPath = parsed.values.get('bwrap');
  if (bwrapPath !== undefined && !bwrapPath.startsWith('/')) {
    throw new UsageError(`--bwrap expects an absolute path, got \`${bwrapPath}\``, 'serve');
  }
  const { configureSandbox } = await import('../server/sandbox/launcher.js');
  configureSandbox({ pidNamespace: mode, bwrapPath });
}
