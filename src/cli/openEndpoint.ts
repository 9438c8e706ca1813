/**
 * Opens the endpoint a command's options chose (endpoint.ts), each kind from its own module,
 * loaded on demand. This module imports nothing else at run time, so the main bundle holds it
 * and `execrx run` starts opening the endpoint (a registry's first lookup) before it loads the
 * client (runCommand.ts).
 */
import type { Endpoint, EndpointTarget } from './endpoint.js';

/** Opens the endpoint `target` names; `command` names the subcommand in usage errors. */
export function openEndpoint(target: EndpointTarget, command: string): Promise<Endpoint> {
  switch (target.kind) {
    case 'url':
      return import('./endpoint.js').then(({ remoteEndpoint }) =>
        remoteEndpoint(target.url, target.token),
      );
    case 'registry':
      return import('./registryEndpoint.js').then(({ registryEndpoint }) =>
        registryEndpoint(target.registryUrl, target.environmentId, target.token),
      );
    case 'embedded':
      return import('./embeddedEndpoint.js').then(({ startEmbeddedEndpoint }) =>
        startEmbeddedEndpoint(),
      );
    case 'configured':
      return import('./configuredEndpoint.js').then(({ configuredEndpoint }) =>
        configuredEndpoint(target.environmentId, command),
      );
  }
}
