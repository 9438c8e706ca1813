/**
 * `environment/info` (spec §9.1; key set as observed on 0.169.0): the executor's shell, cwd,
 * home, OS, temp dirs and version, plus capability flags that are true only for what this
 * executor actually implements.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EnvironmentCapabilities, EnvironmentInfoWire } from '../protocol/environment.js';
import { cachedDirectoryUri, cachedShell } from './fastpath/environmentCache.js';
import { uriFromPath } from './hostPath.js';

/** What this executor reports: the protocol's `environment/info` shape, as sent. */
export type EnvironmentInfo = EnvironmentInfoWire;

/** Capability flags of 0.169.0, each true only when implemented here. */
export const EXECUTOR_CAPABILITIES = {
  networkProxyLaunch: false,
  networkProxyReviewDomains: false,
  credentialMasking: false,
  credentialMaskingCustomProviders: false,
  capabilityDiscoverySandbox: false,
  fsWatchMissing: true,
  capabilityDiscoveryV2: true,
  environmentConfigRead: true,
  httpHeaderEnvVars: true,
  sandboxedFileStreaming: true,
  fileWriteStreaming: true,
  shellSnapshotV2: false,
  windowsMxc: false,
  linuxRootWritePreservesDevices: false,
  linuxApprovedRootWritePreservesRestrictions: false,
} as const satisfies Record<keyof EnvironmentCapabilities, boolean>;

const KNOWN_SHELLS = ['zsh', 'bash', 'sh', 'pwsh', 'powershell'];

function findOnPath(program: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir !== '' && existsSync(join(dir, program))) return join(dir, program);
  }
  return undefined;
}

/** Login shell if it is a known one, else bash, zsh (zsh first on macOS), else /bin/sh. */
export function detectShell(): { name: string; path: string } {
  let login: string | undefined;
  try {
    login = userInfo().shell ?? undefined;
  } catch {
    login = undefined;
  }
  if (login && KNOWN_SHELLS.includes(basename(login)) && existsSync(login)) {
    return { name: basename(login), path: login };
  }
  const order = process.platform === 'darwin' ? ['zsh', 'bash'] : ['bash', 'zsh'];
  for (const name of order) {
    const found =
      findOnPath(name) ?? [`/bin/${name}`, `/usr/bin/${name}`].find((path) => existsSync(path));
    if (found) return { name, path: found };
  }
  return { name: 'sh', path: '/bin/sh' };
}

function platformOs(): string {
  if (process.platform === 'darwin') return 'macos';
  if (process.platform === 'win32') return 'windows';
  return process.platform;
}

let cachedVersion: string | undefined;

/** `execrx <package version>`, read from the nearest execrx package.json. */
export function executorVersion(): string {
  if (cachedVersion) return cachedVersion;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const manifest = JSON.parse(readFileSync(candidate, 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'execrx' && manifest.version)
        return (cachedVersion = `execrx ${manifest.version}`);
    }
    dir = dirname(dir);
  }
  return (cachedVersion = 'execrx 0.0.0');
}

function uriOrNull(path: string | undefined): string | null {
  if (!path) return null;
  return cachedDirectoryUri(path, () => {
    try {
      return uriFromPath(path);
    } catch {
      return null;
    }
  });
}

/**
 * What this executor answers to `environment/info` (and carries in the `initialize` result): shell,
 * cwd, home, OS, temp dirs, version and capability flags that are true only for what it implements.
 */
export function environmentInfo(): EnvironmentInfo {
  return {
    shell: { ...cachedShell(detectShell) },
    executorVersion: executorVersion(),
    cwd: uriOrNull(process.cwd()),
    userHomeDir: uriOrNull(homedir()),
    platformOs: platformOs(),
    prependPathDirs: [],
    temporaryDirectories: [],
    tempDir: uriOrNull(tmpdir()),
    capabilities: { ...EXECUTOR_CAPABILITIES },
  };
}
