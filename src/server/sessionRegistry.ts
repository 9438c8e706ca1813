/**
 * Sessions outlive connections (spec §4.2–4.4). A session owns its process table; when its
 * connection drops it stays detached for 30 s with its processes running and their output
 * retained, and `initialize{resumeSessionId}` on a new connection re-attaches it.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../protocol/errors.js';
import { ProcessManager } from './processManager.js';
import { RpcFailure } from './rpcFailure.js';
import { Spawner } from './spawner.js';

export const DETACHED_SESSION_TTL_MS = 30_000;

/** What a session needs from the connection it is attached to. */
export interface SessionOwner {
  sendNotification(method: string, params: unknown): void;
}

export class Session {
  readonly processes: ProcessManager;
  private ownerValue: SessionOwner | undefined;
  detachedUntil: number | undefined;
  expiryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly id: string,
    spawner?: Spawner,
  ) {
    // Notifications are dropped while detached; the processes keep their replay buffers.
    this.processes = new ProcessManager(
      (method, params) => this.ownerValue?.sendNotification(method, params),
      spawner,
    );
  }

  get owner(): SessionOwner | undefined {
    return this.ownerValue;
  }

  attach(owner: SessionOwner): void {
    this.ownerValue = owner;
    this.detachedUntil = undefined;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
  }

  detach(): void {
    this.ownerValue = undefined;
    this.processes.hold();
  }
}

/**
 * Node has no PR_SET_PDEATHSIG: when the executor's own process exits, kill the children of
 * every live registry synchronously so no process group outlives it.
 */
const liveRegistries = new Set<SessionRegistry>();
let exitHookInstalled = false;

function trackRegistry(registry: SessionRegistry): void {
  liveRegistries.add(registry);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const live of liveRegistries) live.shutdown();
  });
}

export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  /** Starts every session's pipe-mode children (spawner.ts); stopped with the registry. */
  private readonly spawner = new Spawner();

  constructor(private readonly detachedTtlMs: number = DETACHED_SESSION_TTL_MS) {
    trackRegistry(this);
  }

  get size(): number {
    return this.sessions.size;
  }

  create(owner: SessionOwner): Session {
    const session = new Session(randomUUID(), this.spawner);
    session.attach(owner);
    this.sessions.set(session.id, session);
    return session;
  }

  /** Re-attaches a detached session, or throws the binary's error (-32600 unknown / -32010 attached). */
  resume(sessionId: string, owner: SessionOwner): Session {
    const session = this.sessions.get(sessionId);
    if (!session) throw RpcFailure.invalidRequest(`unknown session id ${sessionId}`);
    if (session.owner !== undefined) {
      throw new RpcFailure(
        ErrorCode.sessionAlreadyAttached,
        `session ${sessionId} is already attached to another connection`,
      );
    }
    if (session.detachedUntil !== undefined && Date.now() >= session.detachedUntil) {
      this.remove(session);
      throw RpcFailure.invalidRequest(`unknown session id ${sessionId}`);
    }
    session.attach(owner);
    session.processes.catchUp();
    return session;
  }

  /** The owner's connection ended: keep the session for the TTL, then kill its processes. */
  detach(session: Session, owner: SessionOwner): void {
    if (session.owner !== owner) return;
    session.detach();
    session.detachedUntil = Date.now() + this.detachedTtlMs;
    session.expiryTimer = setTimeout(() => {
      if (session.owner === undefined && this.sessions.get(session.id) === session)
        this.remove(session);
    }, this.detachedTtlMs);
    session.expiryTimer.unref();
  }

  private remove(session: Session): void {
    if (session.expiryTimer) clearTimeout(session.expiryTimer);
    this.sessions.delete(session.id);
    session.processes.shutdown();
  }

  /** Kills every process of every session (executor shutdown). */
  shutdown(): void {
    for (const session of [...this.sessions.values()]) this.remove(session);
    this.spawner.stop();
    liveRegistries.delete(this);
  }
}
