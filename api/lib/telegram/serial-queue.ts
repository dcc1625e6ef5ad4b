import { apiLog, errorMessage } from "../log.ts";

/**
 * Runs async jobs in the background one at a time, in the order pushed, with at most `capacity`
 * jobs waiting: a push past it is refused (`push` returns false; the caller logs what it dropped).
 * A job that throws is logged (stage `telegram`, `what` names the queue) and the next one runs.
 * Used by the bot so no webhook request waits on the Bot API (replies, updates waiting for the
 * bot's identity).
 */
export class SerialQueue {
  private readonly waiting: (() => Promise<void>)[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly capacity: number,
    private readonly what: string,
  ) {}

  /** Queues `job`; false (nothing queued) when `capacity` jobs already wait. */
  push(job: () => Promise<void>): boolean {
    if (this.waiting.length >= this.capacity) return false;
    this.waiting.push(job);
    this.running ??= this.drain();
    return true;
  }

  /** Whether a job is running or waiting. */
  get busy(): boolean {
    return this.running !== null;
  }

  /** Resolves once no job runs or waits (jobs pushed meanwhile included). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      for (let job = this.waiting.shift(); job; job = this.waiting.shift()) {
        try {
          await job();
        } catch (err) {
          apiLog("error", "telegram", `${this.what} failed`, { error: errorMessage(err) });
        }
      }
    } finally {
      this.running = null;
    }
  }
}
