/**
 * The registry operations of one node over the shared store: `/register` binds an
 * environment id to its first executor key (refusing another key until the registration
 * expires or is deleted), `/connect` signs a harness URL for the node holding the executor,
 * `/validate` checks an authorization statelessly, `DELETE` lets the registrant remove its
 * registration. A store that cannot be reached answers 503 (retryable), never a guess.
 */
import { randomUUID } from 'node:crypto';
import {
  checkHarnessAuthorization,
  harnessKeyFingerprint,
  issueHarnessAuthorization,
} from './harnessAuthorization.js';
import type { RendezvousNodeContext } from './nodeContext.js';
import { type RegistryBackend, RegistryRequestError } from './registryEndpoints.js';
import { tokenId } from './rendezvousStore.js';
import { signRendezvousUrl, verifyRendezvousUrl } from './rendezvousUrl.js';
import { tokensFor } from './trust.js';

export function registryBackend(node: RendezvousNodeContext): RegistryBackend {
  const { store, secret, scheduler, limits, emit } = node;
  const stored = async <T>(operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (error) {
      emit({ type: 'store-failed', detail: (error as Error).message });
      throw new RegistryRequestError(
        503,
        'store_unavailable',
        'the rendezvous store is unavailable; retry shortly',
      );
    }
  };
  const wsBase = (httpUrl: string): string => httpUrl.replace(/^http/, 'ws');

  return {
    tokensFor: (environmentId) => tokensFor(node.tokens, environmentId),
    allowedOrigins: node.allowedOrigins,

    async register(environmentId, executorPublicKey, executorToken) {
      const registrationId = randomUUID();
      const now = scheduler.now();
      const outcome = await stored(() =>
        store.register({
          environmentId,
          executorPublicKey,
          keyFingerprint: harnessKeyFingerprint(executorPublicKey),
          registrationId,
          tokenId: tokenId(executorToken),
          nowMs: now,
          ttlMs: limits.registrationTtlMs,
          maxEnvironmentsPerToken: limits.maxEnvironmentsPerToken,
        }),
      );
      if (outcome === 'bound') {
        emit({ type: 'registration-refused', environmentId, why: 'bound' });
        throw new RegistryRequestError(
          409,
          'environment_bound',
          `environment \`${environmentId}\` is bound to another executor key until its registration expires or its owner deletes it`,
        );
      }
      if (outcome === 'token_limit') {
        emit({ type: 'registration-refused', environmentId, why: 'token_limit' });
        throw new RegistryRequestError(
          429,
          'too_many_environments',
          `this token already holds ${limits.maxEnvironmentsPerToken} environments; delete one or wait for one to expire`,
        );
      }
      // The same executor registering again: its old socket here (if any) is superseded.
      const relay = node.relays.get(environmentId);
      if (relay?.attachedRegistrationId !== undefined) relay.detachExecutor('superseded');
      emit({ type: 'registered', environmentId, registrationId });
      const url = signRendezvousUrl(node.state.publicWsBase, secret, {
        role: 'environment',
        environmentId,
        registrationId,
        expiresAtMs: now + limits.environmentUrlTtlMs,
      });
      return { registrationId, url };
    },

    async connect(environmentId, harnessPublicKey) {
      const now = scheduler.now();
      const record = await stored(() => store.get(environmentId, now));
      if (!record) return undefined;
      const holder = record.attachedNode;
      if (holder === undefined) return 'offline';
      let nodeUrl: string;
      if (holder === node.nodeId) {
        const relay = node.relays.get(environmentId);
        if (relay?.attachedRegistrationId !== record.registrationId || node.state.draining) {
          return 'offline';
        }
        nodeUrl = node.state.advertisedUrl;
      } else {
        const info = await stored(() => store.node(holder, now));
        if (!info || info.draining) return 'offline';
        nodeUrl = info.url;
      }
      const scope = {
        environmentId,
        executorRegistrationId: record.registrationId,
        harnessPublicKey,
      };
      return {
        registrationId: record.registrationId,
        url: signRendezvousUrl(wsBase(nodeUrl), secret, {
          role: 'harness',
          environmentId,
          registrationId: record.registrationId,
          expiresAtMs: now + limits.authorizationTtlMs,
        }),
        executorPublicKey: record.executorPublicKey,
        authorization: issueHarnessAuthorization(secret, scope, now + limits.authorizationTtlMs),
      };
    },

    async validate(environmentId, request, streamId) {
      const now = scheduler.now();
      const record = await stored(() => store.get(environmentId, now));
      if (!record) return undefined;
      const check =
        request.executor_registration_id !== record.registrationId
          ? ({ valid: false, reason: 'stale_registration' } as const)
          : checkHarnessAuthorization(
              secret,
              {
                environmentId,
                executorRegistrationId: record.registrationId,
                harnessPublicKey: request.harness_public_key,
              },
              request.harness_key_authorization,
              now,
            );
      emit({
        type: 'validated',
        environmentId,
        ...(streamId === undefined ? {} : { streamId }),
        valid: check.valid,
        ...(check.valid ? {} : { rejection: check.reason }),
      });
      return check.valid;
    },

    async remove(environmentId, url) {
      let target: string;
      try {
        const parsed = new URL(url);
        target = `${parsed.pathname}${parsed.search}`;
      } catch {
        return false;
      }
      const verified = verifyRendezvousUrl(target, secret, scheduler.now());
      if (
        !verified.ok ||
        verified.claims.role !== 'environment' ||
        verified.claims.environmentId !== environmentId
      ) {
        return false;
      }
      const { registrationId } = verified.claims;
      const deleted = await stored(() =>
        store.delete(environmentId, registrationId, limits.tombstoneMs),
      );
      if (!deleted) return false;
      const relay = node.relays.get(environmentId);
      if (relay?.attachedRegistrationId === registrationId) relay.detachExecutor('superseded');
      emit({ type: 'deleted', environmentId, registrationId });
      return true;
    },
  };
}
