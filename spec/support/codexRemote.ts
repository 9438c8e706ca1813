/**
 * Test helper: run the real `codex exec-server` (0.169.0) as a Noise executor against one of
 * our rendezvous servers: `codex exec-server --remote <registry> --environment-id <id>` with a
 * throwaway CODEX_HOME and `CODEX_API_KEY` = the rendezvous executor token (loopback
 * registries may take an API key as bearer token, noise-relay.md §9).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, timeout } from 'rxjs';
import type { Rendezvous, RendezvousOptions } from '../../src/rendezvous/index.js';
import { cleanEnv, codexCommand, stopChild } from './codexExecServer.js';
import { startRendezvousSetup, type RendezvousSetup } from './rendezvousHarness.js';

export interface CodexRemoteOptions {
  /** Environment id to register; default a fresh `codex-<uuid>`. */
  readonly environmentId?: string;
  /** `CODEX_API_KEY`, i.e. the rendezvous executor token. */
  readonly apiKey: string;
  /** How long to wait for registration + attached socket. Default 20 s. */
  readonly startTimeoutMs?: number;
  /** Working directory of the executor. */
  readonly cwd?: string;
  /** Extra environment (e.g. `RUST_LOG`). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface RunningCodexRemote {
  readonly environmentId: string;
  /** Registration id of the attached executor socket. */
  readonly registrationId: string;
  /** Everything the executor wrote to stderr so far (capped at 64 KiB). */
  stderr(): string;
  /** Kills the executor (SIGTERM, then SIGKILL) and removes its CODEX_HOME. */
  stop(): Promise<void>;
}

export async function startCodexRemote(
  rendezvous: Rendezvous,
  options: CodexRemoteOptions,
): Promise<RunningCodexRemote> {
  const environmentId = options.environmentId ?? `codex-${randomUUID()}`;
  const codexHome = await mkdtemp(join(tmpdir(), 'execrx-codex-remote-'));
  const { command, prefixArgs } = codexCommand();
  // Subscribe before spawning so the attach event cannot be missed.
  const attached = firstValueFrom(
    rendezvous.events.pipe(
      filter(
        (event) => event.type === 'executor-attached' && event.environmentId === environmentId,
      ),
      timeout(options.startTimeoutMs ?? 20_000),
    ),
  );
  const child = spawn(
    command,
    [...prefixArgs, 'exec-server', '--remote', rendezvous.url, '--environment-id', environmentId],
    {
      cwd: options.cwd ?? process.cwd(),
      env: { ...cleanEnv(options.env, codexHome), CODEX_API_KEY: options.apiKey },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    if (stderr.length < 65_536) stderr += text;
  });
  child.on('error', () => undefined);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await stopChild(child);
      await rm(codexHome, { recursive: true, force: true });
    })();
    return stopping;
  };

  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(
        new Error(
          `codex exec-server --remote exited with ${signal ?? `code ${code}`} before attaching; stderr:\n${stderr || '(empty)'}`,
        ),
      ),
    ),
  );
  exited.catch(() => undefined);
  try {
    const event = await Promise.race([attached, exited]);
    if (event.type !== 'executor-attached') throw new Error('unreachable');
    return { environmentId, registrationId: event.registrationId, stderr: () => stderr, stop };
  } catch (error) {
    await stop();
    if (error instanceof Error && error.name === 'TimeoutError') {
      throw new Error(
        `codex exec-server --remote did not attach to ${rendezvous.url} in time; stderr:\n${stderr || '(empty)'}`,
      );
    }
    throw error;
  }
}

export interface CodexRendezvousSetup extends RendezvousSetup<RunningCodexRemote> {
  /** The executor's working directory (a fresh temporary dir, removed by `stop`). */
  readonly workDir: string;
}

/**
 * A rendezvous with the real binary attached in `--remote` mode (API key = the executor
 * token), working in a fresh temporary dir named after `workDirPrefix`.
 */
export async function startCodexRendezvousSetup(
  options: RendezvousOptions,
  workDirPrefix: string,
): Promise<CodexRendezvousSetup> {
  const workDir = realpathSync(await mkdtemp(join(tmpdir(), workDirPrefix)));
  try {
    const setup = await startRendezvousSetup(options, (rendezvous) =>
      startCodexRemote(rendezvous, { apiKey: options.executorToken, cwd: workDir }),
    );
    return {
      ...setup,
      workDir,
      stop: async () => {
        await setup.stop();
        await rm(workDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(workDir, { recursive: true, force: true });
    throw error;
  }
}
