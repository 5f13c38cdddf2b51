/**
 * Timers in simulated seconds: a simulated second lasts 1 / speed real seconds. Every timer is
 * unref()'d (a simulated cluster never keeps the process alive) and clear() cancels them all,
 * rejecting pending sleeps so no caller waits forever on a closed driver.
 */

export type CancelTimer = () => void;

export class SimulatedDriverClosedError extends Error {
  constructor() {
    super('simulated driver closed');
    this.name = 'SimulatedDriverClosedError';
  }
}

export class SimTimers {
  private readonly timeouts = new Set<NodeJS.Timeout>();
  private readonly intervals = new Set<NodeJS.Timeout>();
  private readonly sleepers = new Set<(err: Error) => void>();
  private closed = false;

  constructor(private readonly speed: number) {
    if (!(speed > 0)) throw new Error(`speed must be positive, got ${speed}`);
  }

  /** Real milliseconds that `simSeconds` of simulated time last. */
  realMs(simSeconds: number): number {
    return Math.max(0, (simSeconds * 1000) / this.speed);
  }

  after(simSeconds: number, fn: () => void): CancelTimer {
    this.assertOpen();
    const timer = setTimeout(() => {
      this.timeouts.delete(timer);
      fn();
    }, this.realMs(simSeconds));
    timer.unref?.();
    this.timeouts.add(timer);
    return () => {
      clearTimeout(timer);
      this.timeouts.delete(timer);
    };
  }

  every(simSeconds: number, fn: () => void): CancelTimer {
    this.assertOpen();
    const timer = setInterval(fn, Math.max(1, this.realMs(simSeconds)));
    timer.unref?.();
    this.intervals.add(timer);
    return () => {
      clearInterval(timer);
      this.intervals.delete(timer);
    };
  }

  /** Every `seconds` of wall-clock time, whatever the speed (liveness signals between processes, not workload time). */
  everyWallClock(seconds: number, fn: () => void): CancelTimer {
    this.assertOpen();
    const timer = setInterval(fn, Math.max(1, seconds * 1000));
    timer.unref?.();
    this.intervals.add(timer);
    return () => {
      clearInterval(timer);
      this.intervals.delete(timer);
    };
  }

  sleep(simSeconds: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.after(simSeconds, () => {
        this.sleepers.delete(reject);
        resolve();
      });
      this.sleepers.add(reject);
    });
  }

  clear(): void {
    this.closed = true;
    for (const timer of this.timeouts) clearTimeout(timer);
    for (const timer of this.intervals) clearInterval(timer);
    this.timeouts.clear();
    this.intervals.clear();
    const sleepers = [...this.sleepers];
    this.sleepers.clear();
    for (const reject of sleepers) reject(new SimulatedDriverClosedError());
  }

  private assertOpen(): void {
    if (this.closed) throw new SimulatedDriverClosedError();
  }
}
