/**
 * Provisioning state of a provisioned (pending Noise) environment (spec/protocol.md §19):
 * what `reportEnvironmentProvisioningStatus` reported, and the readiness its deferred
 * connection waits for.
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import { ProtocolError } from '../protocol/errors.js';
import type { ProvisioningReadiness } from './transportParams.js';

/** Most capability roots a ready report may select. */
export const MAX_SELECTED_CAPABILITY_ROOTS = 256;

/** A capability root chosen for the provisioned environment (a native path on the executor host). */
export interface SelectedCapabilityRoot {
  readonly id: string;
  readonly path: string;
}

/** What provisioning reports when the environment is ready. */
export interface EnvironmentReadyInfo {
  readonly selectedCapabilityRoots: readonly SelectedCapabilityRoot[];
}

/** A provisioning report: ready with its info, or failed with a message. */
export type ProvisioningReport =
  { readonly ready: EnvironmentReadyInfo } | { readonly error: string };

export class ProvisioningState {
  private readonly readiness = new BehaviorSubject<ProvisioningReadiness | undefined>(undefined);
  private ready: EnvironmentReadyInfo | undefined;

  /** Undefined while pending; replays the current value. */
  get readiness$(): Observable<ProvisioningReadiness | undefined> {
    return this.readiness.asObservable();
  }

  get current(): ProvisioningReadiness | undefined {
    return this.readiness.value;
  }

  /** The info of the last ready report. */
  get lastReadyInfo(): EnvironmentReadyInfo | undefined {
    return this.ready;
  }

  /**
   * Ready can recover from an earlier failure; the first failure is kept until a Ready
   * arrives. Throws ProtocolError (after applying what applies) when the report is refused:
   * invalid ready info (which also fails a pending environment), or a failure after Ready
   * ("environment `<id>` is already ready, but a later provisioning report failed: <error>").
   * Guarded by spec/environment/provisioningReports.spec.ts.
   */
  report(environmentId: string, report: ProvisioningReport): void {
    const current = this.readiness.value;
    if ('ready' in report) {
      const invalid = validateReadyInfo(report.ready);
      if (invalid !== undefined) {
        if (current === undefined) this.readiness.next({ ok: false, error: invalid });
        throw new ProtocolError(invalid);
      }
      this.ready = report.ready;
      if (current?.ok !== true) this.readiness.next({ ok: true });
      return;
    }
    if (current === undefined) {
      this.readiness.next({ ok: false, error: report.error });
    } else if (current.ok) {
      throw new ProtocolError(
        `environment \`${environmentId}\` is already ready, but a later provisioning report failed: ${report.error}`,
      );
    }
  }

  /** Provisioning ended without a report: waiting connections fail. */
  close(): void {
    this.readiness.complete();
  }
}

/** Why `info` cannot be accepted, or undefined. */
export function validateReadyInfo(info: EnvironmentReadyInfo): string | undefined {
  const roots = info.selectedCapabilityRoots;
  if (roots.length > MAX_SELECTED_CAPABILITY_ROOTS) {
    return `environment selected ${roots.length} capability roots; at most ${MAX_SELECTED_CAPABILITY_ROOTS} are allowed`;
  }
  const ids = new Set<string>();
  for (const root of roots) {
    if (root.id === '' || ids.has(root.id)) {
      return `environment selected an empty or duplicate capability root id \`${root.id}\``;
    }
    if (!root.path.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(root.path)) {
      return `capability root \`${root.id}\` path is not absolute: ${root.path}`;
    }
    ids.add(root.id);
  }
  return undefined;
}
