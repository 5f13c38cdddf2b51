/** Fan-out of driver events to subscribers; one failing listener does not starve the others. */
import type { DriverEvent } from './types';

export type DriverEventListener = (event: DriverEvent) => void;

export class DriverEventBus {
  private readonly listeners = new Set<DriverEventListener>();

  /** Subscribes; the returned function unsubscribes (idempotent). */
  on(listener: DriverEventListener): () => void {
    const entry: DriverEventListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  emit(event: DriverEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        process.emitWarning(`driver event listener threw on ${event.type}: ${(err as Error).message}`);
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
