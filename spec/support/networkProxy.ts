/** What the real executor needs to run a process behind its own network proxy. */
import type { StartProcessOptions } from '../../src/client/index.js';

/** The proxy config the executor requires (spec/fixtures/FINDINGS.md "Network policy"). */
export const PROXY = {
  enabled: true,
  enableSocks5: false,
  enableSocks5Udp: false,
  allowUpstreamProxy: false,
  dangerouslyAllowAllUnixSockets: false,
  mode: 'full',
  allowLocalBinding: false,
};

/**
 * Start options for curl through the executor's proxy to a non-loopback host (which makes the
 * executor ask the client); it prints the HTTP status the proxy gave. Specs deny every
 * request, so nothing leaves.
 */
export function curlBehindProxy(cwd: string): StartProcessOptions {
  return {
    argv: ['sh', '-c', 'curl -s -m 10 http://example.com/ -o /dev/null -w "code=%{http_code}"'],
    cwd,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    networkProxy: { proxy: PROXY, policyDecisionTimeoutMs: 10_000 },
  };
}
