/** `execrx serve`'s `--ws-*` options (the flags of `codex exec-server`): WebSocket client auth. */
import type { OptionSpec, ParsedOptions } from './parseOptions.js';
import { UsageError } from './usageError.js';
import type { WebSocketAuthFlags } from '../server/webSocketAuth.js';
import { WEB_SOCKET_AUTH_MODES, type WebSocketAuthMode } from '../server/webSocketAuthMode.js';

export const WEB_SOCKET_AUTH_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'ws-auth',
    kind: 'value',
    valueName: 'MODE',
    description:
      'Ask every WebSocket client for a credential: capability-token or signed-bearer-token',
  },
  {
    name: 'ws-token-file',
    kind: 'value',
    valueName: 'PATH',
    description: 'capability-token: file holding the token (trimmed)',
  },
  {
    name: 'ws-token-sha256',
    kind: 'value',
    valueName: 'HEX',
    description: 'capability-token: SHA-256 of the token, instead of --ws-token-file',
  },
  {
    name: 'ws-shared-secret-file',
    kind: 'value',
    valueName: 'PATH',
    description: 'signed-bearer-token: file holding the HS256 secret (at least 32 bytes)',
  },
  {
    name: 'ws-issuer',
    kind: 'value',
    valueName: 'ISSUER',
    description: 'signed-bearer-token: required `iss` claim',
  },
  {
    name: 'ws-audience',
    kind: 'value',
    valueName: 'AUDIENCE',
    description: 'signed-bearer-token: required `aud` claim',
  },
  {
    name: 'ws-max-clock-skew-seconds',
    kind: 'value',
    valueName: 'SECONDS',
    description: 'signed-bearer-token: slack on `exp` and `nbf` (default 30)',
  },
];

const AUTH_MODES: readonly string[] = WEB_SOCKET_AUTH_MODES;

/** The `--ws-*` flags, or undefined when none is given. */
export function webSocketAuthFlags(parsed: ParsedOptions): WebSocketAuthFlags | undefined {
  const value = (name: string): string | undefined => parsed.values.get(name);
  const mode = value('ws-auth');
  if (mode !== undefined && !AUTH_MODES.includes(mode)) {
    throw new UsageError(
      `invalid value '${mode}' for '--ws-auth <MODE>' [possible values: ${AUTH_MODES.join(', ')}]`,
      'serve',
    );
  }
  const skew = value('ws-max-clock-skew-seconds');
  if (skew !== undefined && !/^\d{1,15}$/.test(skew)) {
    throw new UsageError(
      `invalid value '${skew}' for '--ws-max-clock-skew-seconds <SECONDS>': expected a whole number of seconds`,
      'serve',
    );
  }
  const flags: WebSocketAuthFlags = {
    ...(mode === undefined ? {} : { mode: mode as WebSocketAuthMode }),
    ...optional('tokenFile', value('ws-token-file')),
    ...optional('tokenSha256', value('ws-token-sha256')),
    ...optional('sharedSecretFile', value('ws-shared-secret-file')),
    ...optional('issuer', value('ws-issuer')),
    ...optional('audience', value('ws-audience')),
    ...(skew === undefined ? {} : { maxClockSkewSeconds: Number(skew) }),
  };
  return Object.keys(flags).length === 0 ? undefined : flags;
}

const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;
