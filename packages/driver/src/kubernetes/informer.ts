/**
 * An informer, as client-go's reflector does it: list, then watch from the list's
 * resourceVersion, keeping a local cache and handing every change to `onDelta`.
 *
 * - resourceVersion bookkeeping: each event (and each BOOKMARK, which the watch asks for) moves
 *   the version the next watch resumes from.
 * - 410 Gone (the version was compacted away, or the API server's watch cache no longer holds it
 *   after a restart): relist at once. A relist is diffed against the cache and the differences
 *   are delivered as deltas, so nothing that changed while the watch was away is lost, and nothing
 *   that did not change is delivered twice.
 * - Any other end (the API server closes the watch, restarts, is unreachable, a watch goes silent
 *   past its timeout): reconnect from the last version, with exponential backoff and jitter.
 *
 * Objects in the cache are plain JSON as the API server sends them (timestamps are strings).
 */
import { Backoff, sleep } from './backoff';
import { httpStatusOf, noteApiFailure } from './retry';

export interface KubeObject {
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export type DeltaType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Delta<T> {
  type: DeltaType;
  object: T;
  /** The cached object it replaces (MODIFIED, DELETED). */
  previous?: T;
  /** True for the deltas of the very first list: the state the informer started from. */
  initial: boolean;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

/** The two calls an informer makes; KubeApi.informerSource builds one per resource. */
export interface InformerSource<T> {
  list(): Promise<ListResult<T>>;
  /**
   * Opens a watch from `resourceVersion` (with bookmarks and a server-side timeout). Resolves
   * with a function that aborts it once the server has answered; `onDone` is called once when
   * the watch ends (an error, or undefined when the server closed it).
   */
  watch(
    resourceVersion: string,
    timeoutSeconds: number,
    onEvent: (type: string, object: unknown) => void,
    onDone: (err?: unknown) => void,
  ): Promise<() => void>;
}

export interface InformerOptions<T> {
  /** For messages: "pods in gantry". */
  what: string;
  source: InformerSource<T>;
  /** Handler of every change; more can subscribe with `subscribe()`. */
  onDelta?(delta: Delta<T>): void;
  backoff?: { initialMs: number; maxMs: number };
  /** Server-side watch timeout; the watch is reopened after it. Default 300 s (+ up to 60 s jitter). */
  watchTimeoutSeconds?: number;
  warn?(message: string): void;
}

export interface InformerStats {
  lists: number;
  watches: number;
  /** Watches that ended with 410 Gone. */
  gone: number;
  errors: number;
}

type WatchOutcome = { end: 'closed' | 'gone' | 'stopped' | 'error'; resourceVersion: string; delivered: number; error?: unknown };

const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class Informer<T extends KubeObject> {
  readonly stats: InformerStats = { lists: 0, watches: 0, gone: 0, errors: 0 };
  private cache = new Map<string, T>();
  private readonly backoff: Backoff;
  private readonly abort = new AbortController();
  private stopWatch?: () => void;
  private running?: Promise<void>;
  private resolveSynced!: () => void;
  private readonly syncedPromise = new Promise<void>((resolve) => (this.resolveSynced = resolve));
  private version?: string;
  private readonly listeners = new Set<(delta: Delta<T>) => void>();

  constructor(private readonly options: InformerOptions<T>) {
    this.backoff = new Backoff(options.backoff ?? { initialMs: 200, maxMs: 10_000 });
  }

  start(): void {
    this.running ??= this.run();
  }

  /** Stops listing and watching; resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.stopWatch?.();
    this.resolveSynced();
    await this.running;
  }

  /** Resolves after the first list (or on stop). */
  synced(): Promise<void> {
    return this.syncedPromise;
  }

  get hasSynced(): boolean {
    return this.stats.lists > 0;
  }

  /** The version the next watch resumes from (undefined before the first list). */
  get resourceVersion(): string | undefined {
    return this.version;
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  /**
   * Adds a handler of every change. Once the informer has listed, the objects already cached are
   * handed to it first, as `initial` ADDED deltas: a late subscriber starts from the same state as
   * one that was there from the first list. Returns the unsubscribe function.
   */
  subscribe(listener: (delta: Delta<T>) => void): () => void {
    this.listeners.add(listener);
    if (this.hasSynced) for (const object of this.cache.values()) this.call(listener, { type: 'ADDED', object, initial: true });
    return () => this.listeners.delete(listener);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.cache.get(`${namespace ?? ''}/${name}`);
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.version === undefined) {
        try {
          const listed = await this.options.source.list();
          if (this.stopped) return;
          this.replace(listed.items);
          this.version = listed.resourceVersion;
          this.stats.lists++;
          this.backoff.reset();
          this.resolveSynced();
        } catch (err) {
          this.stats.errors++;
          noteApiFailure(err);
          this.warn(`list failed: ${describe(err)}`);
          await sleep(this.backoff.next(), this.abort.signal);
          continue;
        }
      }
      const startedAt = Date.now();
      const outcome = await this.watchOnce(this.version);
      this.version = outcome.resourceVersion;
      if (outcome.end === 'stopped') return;
      if (outcome.end === 'gone') {
        // The version is too old to resume from: relist (at once, as client-go does).
        this.stats.gone++;
        this.version = undefined;
        continue;
      }
      if (outcome.end === 'error') {
        this.stats.errors++;
        noteApiFailure(outcome.error);
        this.warn(`watch failed: ${describe(outcome.error)}`);
        await sleep(this.backoff.next(), this.abort.signal);
      } else if (outcome.delivered === 0 && Date.now() - startedAt < 1000) {
        // Closed at once without a single event: do not spin.
        await sleep(this.backoff.next(), this.abort.signal);
      }
    }
  }

  private watchOnce(from: string): Promise<WatchOutcome> {
    const timeoutSeconds = Math.round((this.options.watchTimeoutSeconds ?? 300) * (1 + Math.random() * 0.2));
    return new Promise<WatchOutcome>((resolve) => {
      let version = from;
      let delivered = 0;
      let finished = false;
      let abortWatch: (() => void) | undefined;
      // A watch that outlives its own timeout by this much went silent (a half-open connection).
      const watchdog = setTimeout(() => finish('error', new Error(`watch silent for ${timeoutSeconds + 30} s`)), (timeoutSeconds + 30) * 1000);
      watchdog.unref();
      const finish = (end: WatchOutcome['end'], error?: unknown) => {
        if (finished) return;
        finished = true;
        clearTimeout(watchdog);
        this.stopWatch = undefined;
        abortWatch?.();
        resolve({ end, resourceVersion: version, delivered, error });
      };
      this.stopWatch = () => finish('stopped');
      this.stats.watches++;
      const onEvent = (type: string, object: unknown) => {
        if (finished) return;
        const obj = object as KubeObject & { code?: number; message?: string };
        switch (type) {
          case 'ADDED':
          case 'MODIFIED':
          case 'DELETED':
            this.apply(type, object as T);
            version = obj.metadata?.resourceVersion ?? version;
            delivered++;
            return;
          case 'BOOKMARK':
            version = obj.metadata?.resourceVersion ?? version;
            return;
          case 'ERROR':
            if (obj.code === 410) return finish('gone');
            return finish('error', Object.assign(new Error(`watch error ${obj.code}: ${obj.message}`), { code: obj.code }));
          default:
            return;
        }
      };
      const onDone = (err?: unknown) => {
        if (err === undefined || err === null) return finish('closed');
        return finish(httpStatusOf(err) === 410 ? 'gone' : 'error', err);
      };
      this.options.source.watch(from, timeoutSeconds, onEvent, onDone).then(
        (abort) => {
          abortWatch = abort;
          if (finished) abort();
          else this.backoff.reset(); // the server answered: connected
        },
        (err: unknown) => onDone(err ?? new Error('watch failed')),
      );
      if (this.stopped) finish('stopped');
    });
  }

  private apply(type: DeltaType, object: T): void {
    const key = keyOf(object);
    const previous = this.cache.get(key);
    if (type === 'DELETED') this.cache.delete(key);
    else this.cache.set(key, object);
    this.deliver({ type, object, previous, initial: false });
  }

  /** A (re)list: the cache becomes the list; what differs from before is delivered as deltas. */
  private replace(items: T[]): void {
    const initial = this.stats.lists === 0;
    const before = this.cache;
    this.cache = new Map(items.map((o) => [keyOf(o), o]));
    for (const [key, object] of this.cache) {
      const previous = before.get(key);
      if (!previous) this.deliver({ type: 'ADDED', object, initial });
      else if (previous.metadata?.resourceVersion !== object.metadata?.resourceVersion) this.deliver({ type: 'MODIFIED', object, previous, initial });
    }
    for (const [key, previous] of before) {
      if (!this.cache.has(key)) this.deliver({ type: 'DELETED', object: previous, previous, initial });
    }
  }

  private deliver(delta: Delta<T>): void {
    if (this.options.onDelta) this.call(this.options.onDelta, delta);
    for (const listener of this.listeners) this.call(listener, delta);
  }

  private call(listener: (delta: Delta<T>) => void, delta: Delta<T>): void {
    try {
      listener(delta);
    } catch (err) {
      this.warn(`handler failed on ${delta.type} ${keyOf(delta.object)}: ${describe(err)}`);
    }
  }

  private warn(message: string): void {
    if (this.stopped) return;
    (this.options.warn ?? ((m: string) => process.emitWarning(m)))(`informer (${this.options.what}): ${message}`);
  }
}

function describe(err: unknown): string {
  const status = httpStatusOf(err);
  const message = err instanceof Error ? err.message : String(err);
  return status === undefined ? message : `${status} ${message}`;
}
