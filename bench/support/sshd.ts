/**
 * A private OpenSSH server for the benchmarks: Debian's `/usr/sbin/sshd` on a free loopback
 * port with a generated host key, a generated user key, and a dedicated user whose login
 * shell (`/bin/sh`, dash) reads no rc files for `sh -c`; `PermitUserRC no` and no PAM, motd
 * or last-log, so a command costs what SSH itself costs. Started in the foreground (`-D`) and
 * stopped by its pid. Needs root (sshd changes user; the user may have to be created).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../spec/support/freePort.js';

export const SSH_USER = 'execrx-bench';
const SSHD = '/usr/sbin/sshd';

export interface RunningSshd {
  readonly port: number;
  readonly user: string;
  /** Path of the user's private key (ed25519, no passphrase). */
  readonly keyPath: string;
  readonly privateKey: Buffer;
  /** `ssh` arguments up to (not including) the remote command; `warm` multiplexes on a master. */
  sshArgs(warm: boolean): string[];
  stop(): Promise<void>;
}

/** Why this machine cannot run the SSH comparison, with what to do; undefined when it can. */
export function sshdMissing(): string | undefined {
  if (!existsSync(SSHD) || !existsSync('/usr/bin/ssh') || !existsSync('/usr/bin/ssh-keygen')) {
    return 'needs OpenSSH: `sudo apt-get install -y openssh-server openssh-client` (Debian/Ubuntu)';
  }
  if (process.getuid?.() !== 0) {
    return `needs root (sshd switches to the user \`${SSH_USER}\`, created if absent): run it with sudo`;
  }
  return undefined;
}

function ensureUser(): void {
  try {
    execFileSync('id', [SSH_USER], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--create-home', '--shell', '/bin/sh', SSH_USER], {
      stdio: 'inherit',
    });
  }
  // The account must be usable without a password (key only): unlock it with `*` → `NP`.
  execFileSync('usermod', ['-p', '*', SSH_USER], { stdio: 'ignore' });
}

export async function startSshd(): Promise<RunningSshd> {
  const missing = sshdMissing();
  if (missing) throw new Error(`ssh comparison ${missing}`);
  ensureUser();
  const dir = mkdtempSync(join(tmpdir(), 'execrx-sshd-'));
  mkdirSync('/run/sshd', { recursive: true });
  const keygen = (path: string): void => {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path], { stdio: 'ignore' });
  };
  keygen(join(dir, 'host_key'));
  keygen(join(dir, 'user_key'));
  // sshd reads authorized_keys as the user: the directory and that file must be readable.
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'user_key.pub')), {
    mode: 0o644,
  });
  const port = await freePort();
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      `AllowUsers ${SSH_USER}`,
      'StrictModes no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'PermitUserRC no',
      'PrintMotd no',
      'PrintLastLog no',
      'UseDNS no',
      'MaxSessions 1000',
      'MaxStartups 1000',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready once the port accepts connections.
  for (let attempt = 0; ; attempt += 1) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createServer().listen(port, '127.0.0.1');
      socket.once('listening', () => socket.close(() => resolve(false)));
      socket.once('error', () => resolve(true));
    });
    if (ok) break;
    if (attempt > 100 || child.exitCode !== null) throw new Error('sshd did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const keyPath = join(dir, 'user_key');
  const control = join(dir, 'control');
  const common = [
    '-q',
    '-p',
    String(port),
    '-i',
    keyPath,
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
  ];
  let master: ChildProcess | undefined;
  return {
    port,
    user: SSH_USER,
    keyPath,
    privateKey: readFileSync(keyPath),
    sshArgs(warm) {
      if (!warm)
        return [
          ...common,
          '-o',
          'ControlMaster=no',
          '-o',
          'ControlPath=none',
          `${SSH_USER}@127.0.0.1`,
        ];
      if (master === undefined) {
        master = spawn(
          'ssh',
          [...common, '-M', '-N', '-o', `ControlPath=${control}`, `${SSH_USER}@127.0.0.1`],
          {
            stdio: 'ignore',
          },
        );
        // Wait for the control socket.
        for (let i = 0; i < 200 && !existsSync(control); i += 1) execFileSync('sleep', ['0.05']);
      }
      return [...common, '-o', `ControlPath=${control}`, `${SSH_USER}@127.0.0.1`];
    },
    async stop() {
      master?.kill();
      child.kill();
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
