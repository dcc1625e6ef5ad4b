/**
 * Coherence of the per-instance key verification cache across API instances sharing one Postgres
 * (the spec's "old token stops at once on every instance").
 *
 * Protocol (Postgres LISTEN/NOTIFY plus acknowledged leases):
 * - Every key change that can make a cached verification wrong (deactivate, rotate, update) bumps
 *   `api_key_changes.generation` and sends `NOTIFY ballast_api_keys, '<generation> <key id>'` in the
 *   same statement (so in the same transaction).
 * - Each caching instance holds one dedicated session: `LISTEN ballast_api_keys`, and a row in
 *   `api_key_instances` (`seen_generation`, `lease_until`) renewed every `renewMs` on that session.
 *   On a notification it drops the key from its cache, then acknowledges (`seen_generation`).
 * - The writer returns only when every instance with a live lease has acknowledged the generation
 *   (polling `api_key_instances`), or after the longest lease has run out.
 * - An instance serves a key from memory (outside an outage) only while its own lease is valid: until
 *   `sent + leaseMs − margin`, where `sent` is when its last successful renewal was sent, which is
 *   before the database set `lease_until`. So an instance that stopped hearing notifications (session
 *   lost, database hung) stops trusting its cache before any writer stops waiting for it.
 * - Losing the session, or (re)connecting it, bumps `epoch`: verifications made under an older epoch
 *   are re-checked against the store before they are used again (notifications may have been missed).
 */
import { randomUUID } from "node:crypto";
import { apiLog, errorMessage } from "./log.ts";

/** The notification channel of key changes. */
export const KEY_CHANGES_CHANNEL = "ballast_api_keys";
/** Default lease (ms) of an instance's cache; a writer waits at most this long for a silent instance. */
export const DEFAULT_LEASE_MS = 3000;
/** Safety margin (ms) by which an instance stops trusting its cache before its lease ends. */
const LEASE_MARGIN_MS = 250;

/** A dedicated session with LISTEN active (see `SqlClient.listen`). */
export interface ListenSession {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  close(): Promise<void>;
}

/** Opens a session listening on a channel; `onLost` fires once when the session dies afterwards. */
export type Listen = (
  channel: string,
  onNotify: (payload: string) => void,
  onLost: (err: unknown) => void,
) => Promise<ListenSession>;

/** Settings of {@link KeyCoherence}. Times in ms. */
export interface KeyCoherenceOptions {
  listen: Listen;
  /** Creates the tables when missing (the key store's schema). */
  ensureSchema: () => Promise<void>;
  /** Drops one key (by id) from the local cache. */
  evict: (keyId: string) => void;
  leaseMs?: number;
  /** Renewal period; default leaseMs / 3. */
  renewMs?: number;
}

const REGISTER = `insert into api_key_instances (instance_id, seen_generation, lease_until)
  select $1, generation, now() + $2::int * interval '1 millisecond' from api_key_changes where id = 1
  on conflict (instance_id) do update set seen_generation = excluded.seen_generation, lease_until = excluded.lease_until
  returning seen_generation, 1 + (select count(*)::int from api_key_instances where lease_until > now() and instance_id <> $1) as live`;
const RENEW = `update api_key_instances set lease_until = now() + $2::int * interval '1 millisecond', seen_generation = greatest(seen_generation, $3::bigint)
  where instance_id = $1 returning 1 + (select count(*)::int from api_key_instances where lease_until > now() and instance_id <> $1) as live`;
const ACK =
  "update api_key_instances set seen_generation = greatest(seen_generation, $2::bigint) where instance_id = $1";

/**
 * One instance's side of the protocol above. `trusted()` says whether cached verifications of the
 * current `epoch` may be served; `liveInstances` is the number of instances with a live lease seen
 * at the latest renewal (≥ 1). Reconnects with backoff (0.5 s to 5 s) and never throws.
 */
export class KeyCoherence {
  /** This instance's row in `api_key_instances`. */
  readonly instanceId = randomUUID();
  /** Bumped when notification continuity is lost or re-established. */
  epoch = 0;
  /** Instances holding a live lease at the latest renewal (this one included), ≥ 1. */
  liveInstances = 1;
  private trustUntil = 0;
  private processedGen = 0;
  private session: ListenSession | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private backoffMs = 500;
  private everConnected = false;
  private warned = false;
  private readonly leaseMs: number;
  private readonly renewMs: number;

  constructor(private readonly opts: KeyCoherenceOptions) {
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.renewMs = opts.renewMs ?? Math.max(50, Math.floor(this.leaseMs / 3));
  }

  /** Whether this instance currently holds a confirmed lease (cached verifications of `epoch` may be served). */
  trusted(): boolean {
    return this.session !== null && performance.now() < this.trustUntil;
  }

  /** Starts connecting in the background; resolves after the first attempt (success or not). */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Stops renewing, removes this instance's row (best effort) and closes the session. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const s = this.session;
    this.session = null;
    this.trustUntil = 0;
    if (s) {
      await s.query("delete from api_key_instances where instance_id = $1", [this.instanceId]).catch(() => undefined);
      await s.close().catch(() => undefined);
    }
  }

  private schedule(ms: number, fn: () => Promise<void>): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void fn();
    }, ms);
    this.timer.unref();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let session: ListenSession | null = null;
    try {
      await this.opts.ensureSchema();
      session = await this.opts.listen(
        KEY_CHANGES_CHANNEL,
        (p) => this.onNotify(p),
        (err) => this.onLost(err),
      );
      if (this.stopped) {
        await session.close();
        return;
      }
      // Verifications started before LISTEN was active may predate a change we will never hear of.
      this.epoch++;
      const sent = performance.now();
      const { rows } = await session.query<{ seen_generation: string | number; live: number }>(REGISTER, [
        this.instanceId,
        this.leaseMs,
      ]);
      if (this.stopped) {
        await session
          .query("delete from api_key_instances where instance_id = $1", [this.instanceId])
          .catch(() => undefined);
        await session.close();
        return;
      }
      this.processedGen = Math.max(this.processedGen, Number(rows[0].seen_generation));
      this.liveInstances = Math.max(1, Number(rows[0].live));
      this.session = session;
      this.trustUntil = sent + this.leaseMs - LEASE_MARGIN_MS;
      this.backoffMs = 500;
      this.warned = false;
      if (this.everConnected)
        apiLog("info", "key-cache", "key change notifications restored; cached verifications are re-checked once");
      this.everConnected = true;
      void session
        .query("delete from api_key_instances where lease_until < now() - interval '1 hour'")
        .catch(() => undefined);
      this.schedule(this.renewMs, () => this.renew());
    } catch (err) {
      if (session) await session.close().catch(() => undefined);
      this.retryLater(err);
    }
  }

  private retryLater(err: unknown): void {
    if (this.stopped) return;
    if (!this.warned)
      apiLog(
        "warn",
        "key-cache",
        "key change notifications unavailable; keys are verified against the store on every request until they are back",
        { error: errorMessage(err) },
      );
    this.warned = true;
    this.schedule(this.backoffMs, () => this.connect());
    this.backoffMs = Math.min(this.backoffMs * 2, 5000);
  }

  private async renew(): Promise<void> {
    const s = this.session;
    if (!s || this.stopped) return;
    const sent = performance.now();
    try {
      const { rows } = await s.query<{ live: number }>(RENEW, [this.instanceId, this.leaseMs, this.processedGen]);
      if (this.session !== s) return;
      if (!rows.length) throw new Error("instance row missing");
      this.liveInstances = Math.max(1, Number(rows[0].live));
      this.trustUntil = sent + this.leaseMs - LEASE_MARGIN_MS;
      this.schedule(this.renewMs, () => this.renew());
    } catch (err) {
      if (this.session !== s) return;
      this.drop(s);
      this.retryLater(err);
    }
  }

  private onNotify(payload: string): void {
    const [gen, id] = payload.split(" ");
    if (id) this.opts.evict(id);
    const g = Number(gen);
    if (!Number.isFinite(g)) return;
    this.processedGen = Math.max(this.processedGen, g);
    void this.session?.query(ACK, [this.instanceId, g]).catch(() => undefined);
  }

  private onLost(err: unknown): void {
    const s = this.session;
    if (!s) return;
    this.drop(s);
    this.retryLater(err);
  }

  private drop(s: ListenSession): void {
    this.session = null;
    this.trustUntil = 0;
    this.epoch++;
    void s.close().catch(() => undefined);
  }
}
