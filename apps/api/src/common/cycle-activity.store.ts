import { Injectable } from '@nestjs/common';

/**
 * Whether this worker process is running scheduling cycles now (it holds the `schedule` job).
 * A cycle is a chain of round trips, each of which waits for this process's event loop; heavy
 * background work any worker may do (a telemetry tick: 80,000 GPUs at 10,000 nodes, a second
 * or more of one event loop) steps aside for a moment while cycles run here, so that another
 * worker takes it (telemetry.processor.ts, integrity.monitor.ts).
 */
@Injectable()
export class CycleActivity {
  private running = 0;

  get cycling(): boolean {
    return this.running > 0;
  }

  async during<T>(fn: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
    }
  }
}
