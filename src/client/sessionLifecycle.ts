/**
 * The lifecycle of one logical session (spec/protocol.md §11, §14, §16) as one discriminated
 * union, with every transition in this class. Nothing else holds the session's transport.
 *
 * ```
 * connecting ──install──▶ connected ──lose──▶ lost ──recover──▶ recovering ──install──▶ connected
 *      └──────────────┴──────────┴────────────┴──────────end──────────┴──▶ retired | failed
 * ```
 * `lost` is the instant between a transport loss and the decision (recover or fail), while
 * `disconnected$` announces the reason; it publishes as `connected` still (spec/client/
 * execServerClient.spec.ts "disconnected$ emits before the state changes").
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import { DisconnectedError, DisconnectReason } from '../protocol/errors.js';
import type { RpcConnection } from '../rpc/rpcConnection.js';

/**
 * - `connected`: a live transport carries calls.
 * - `recovering`: the transport was lost; new calls wait until `resume()` succeeds (or the
 *   session fails). Only entered when the client was connected with `recovery: true`.
 * - `retired`: replaced by another executor session; everything fails with
 *   `exec-server executor was replaced`. Terminal.
 * - `failed`: recovery gave up, the transport was lost without recovery, or the client was
 *   closed. Terminal.
 */
export type SessionState = 'connected' | 'recovering' | 'retired' | 'failed';

export type SessionPhase =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'connected'; readonly rpc: RpcConnection }
  | { readonly kind: 'lost'; readonly error: DisconnectedError }
  | { readonly kind: 'recovering' }
  | { readonly kind: 'retired' | 'failed'; readonly error: DisconnectedError };

export class SessionLifecycle {
  private phase: SessionPhase = { kind: 'connecting' };
  // The public face starts at `connected`: a client is only handed out once installed.
  private publicState: SessionState = 'connected';
  // Made when `state$` is first watched; carries every later change.
  private published: BehaviorSubject<SessionState> | undefined;
  private readingPaused = false;

  get current(): SessionPhase {
    return this.phase;
  }

  /** The public state now. */
  get state(): SessionState {
    return this.publicState;
  }

  /** The public state now and on every change (never the same value twice in a row). */
  get state$(): Observable<SessionState> {
    this.published ??= new BehaviorSubject(this.publicState);
    return this.published.asObservable();
  }

  /** The error every call gets once the session is retired or failed. */
  get terminalError(): DisconnectedError | undefined {
    const phase = this.phase;
    return phase.kind === 'retired' || phase.kind === 'failed' ? phase.error : undefined;
  }

  /** The live transport, or undefined (not connected, or its connection already closed). */
  get liveRpc(): RpcConnection | undefined {
    return this.phase.kind === 'connected' ? this.phase.rpc : undefined;
  }

  /**
   * connecting | recovering → connected. The transport follows the session's flow control from
   * here on: a resume's handshake and replay are read before it pauses
   * (spec/client/readingPaused.spec.ts, "resumes while paused").
   */
  install(rpc: RpcConnection): void {
    const terminal = this.terminalError;
    if (terminal) throw terminal;
    if (rpc.isClosed) throw new DisconnectedError(DisconnectReason.transportDisconnected);
    this.phase = { kind: 'connected', rpc };
    if (this.readingPaused) rpc.setPaused(true);
    this.publish('connected');
  }

  /** Flow control (`ExecServerClient.pauseReading`): the live transport, and each one installed later. */
  setReadingPaused(paused: boolean): void {
    this.readingPaused = paused;
    this.liveRpc?.setPaused(paused);
  }

  /** connected(rpc) → lost; false when `rpc` is not the live transport (nothing changes). */
  lose(rpc: RpcConnection, error: DisconnectedError): boolean {
    if (this.phase.kind !== 'connected' || this.phase.rpc !== rpc) return false;
    this.phase = { kind: 'lost', error };
    return true;
  }

  /** lost → recovering. */
  recover(): void {
    if (this.phase.kind !== 'lost') return;
    this.phase = { kind: 'recovering' };
    this.publish('recovering');
  }

  /**
   * Any live phase → retired | failed. Returns the transport that was live (to close), or
   * null when the session had already ended (the first end wins).
   */
  end(
    kind: 'retired' | 'failed',
    error: DisconnectedError,
  ): { rpc: RpcConnection | undefined } | null {
    if (this.terminalError) return null;
    const rpc = this.liveRpc;
    this.phase = { kind, error };
    this.publish(kind);
    return { rpc };
  }

  /** The public state changes only when it differs. */
  private publish(state: SessionState): void {
    if (this.publicState === state) return;
    this.publicState = state;
    this.published?.next(state);
  }
}
