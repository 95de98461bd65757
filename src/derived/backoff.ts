/**
 * Per-pixel back-off of a background step: a pixel whose step failed, or found nothing to do, is not
 * tried again sooner than the interval (a step may fail every time; a pixel may want nothing), while
 * the other pixels go on. The interval is read at each check, so a setting takes effect at once.
 */
export class PixelBackoff {
  /** When each held pixel was held (ms since the epoch). */
  private readonly since = new Map<string, number>();

  constructor(private readonly intervalMs: () => number) {}

  /** Whether the pixel is held and its interval has not passed yet. */
  waiting(pixelId: string): boolean {
    const at = this.since.get(pixelId);
    return at !== undefined && Date.now() - at < this.intervalMs();
  }

  /** Holds the pixel from now on. */
  hold(pixelId: string): void {
    this.since.set(pixelId, Date.now());
  }

  /** The step went through: the pixel is tried at the next round. */
  clear(pixelId: string): void {
    this.since.delete(pixelId);
  }
}
