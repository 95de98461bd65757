/**
 * A background loop: runs `step` again at once while it reports more work, otherwise after
 * `intervalMs` or when woken. A failing step is reported and retried after the interval; the loop
 * itself never throws. `stop` lets the running step finish and resolves when the loop has ended.
 */
export class PollingLoop {
  private running: Promise<void> | undefined;
  private stopping = false;
  private wakeUp: (() => void) | undefined;
  private woken = false;

  constructor(
    private readonly step: () => Promise<boolean>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.wakeUp?.();
    await this.running;
    this.running = undefined;
  }

  /** Runs the next step now instead of after the interval (a no-op when stopped). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  get isRunning(): boolean {
    return this.running !== undefined && !this.stopping;
  }

  /** `stop` was called and the step in flight should wind down. */
  get stopRequested(): boolean {
    return this.stopping;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.woken = false;
      let more = false;
      try {
        more = await this.step();
      } catch (err) {
        try {
          this.onError(err);
        } catch {
          // A failing error callback must not end the loop.
        }
      }
      if (this.stopping) break;
      // A wake that arrived during the step means new work may be waiting.
      if (!more && !this.woken) await this.sleep();
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.intervalMs);
      timer.unref?.();
      this.wakeUp = done;
    });
  }
}
