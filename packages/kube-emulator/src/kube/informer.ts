/**
 * client-go's informer, small: list, then watch from the list's resourceVersion; keep a cache by
 * namespace/name; hand every change to the handler. A watch that ends (the server closes watches
 * after a while) resumes from the last resourceVersion seen; 410 Gone (the version is too old)
 * relists; errors back off (0.2 s doubling to 5 s). Nothing is polled.
 */
import type { KubeObject } from './objects';
import { httpStatusOf, loadClientNode } from './client';
import type * as K8s from '@kubernetes/client-node';

export type InformerEvent = 'added' | 'modified' | 'deleted';

export interface InformerOptions<T extends KubeObject> {
  config: K8s.KubeConfig;
  /** e.g. `/api/v1/pods`, `/api/v1/nodes` */
  path: string;
  list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>;
  labelSelector?: string;
  fieldSelector?: string;
  onChange: (event: InformerEvent, object: T) => void;
  onError?: (err: unknown) => void;
}

const MIN_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5_000;

export const objectKey = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class Informer<T extends KubeObject> {
  readonly cache = new Map<string, T>();
  private resourceVersion?: string;
  private abort?: AbortController;
  private retry?: NodeJS.Timeout;
  private backoffMs = MIN_BACKOFF_MS;
  private stopped = false;
  private synced?: Promise<void>;

  constructor(private readonly options: InformerOptions<T>) {}

  /** Lists (the handler sees every object as `added`), then watches. Resolves after the first list. */
  start(): Promise<void> {
    this.synced ??= this.relist().then(() => this.watch());
    return this.synced;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.abort?.abort();
  }

  private async relist(): Promise<void> {
    const list = await this.options.list();
    const seen = new Set<string>();
    for (const item of list.items) {
      const key = objectKey(item);
      seen.add(key);
      const before = this.cache.get(key);
      this.cache.set(key, item);
      if (!before) this.options.onChange('added', item);
      else if (before.metadata?.resourceVersion !== item.metadata?.resourceVersion) this.options.onChange('modified', item);
    }
    for (const [key, item] of [...this.cache]) {
      if (seen.has(key)) continue;
      this.cache.delete(key);
      this.options.onChange('deleted', item);
    }
    this.resourceVersion = list.metadata?.resourceVersion;
  }

  private async watch(): Promise<void> {
    if (this.stopped) return;
    const watcher = new (loadClientNode().Watch)(this.options.config);
    let gone = false;
    this.abort = await watcher.watch(
      this.options.path,
      {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
      },
      (type: string, object: T & { code?: number }) => {
        if (type === 'ERROR') {
          if (object.code === 410) gone = true;
          return;
        }
        this.backoffMs = MIN_BACKOFF_MS;
        const version = object.metadata?.resourceVersion;
        if (version) this.resourceVersion = version;
        if (type === 'BOOKMARK') return;
        const key = objectKey(object);
        if (type === 'DELETED') {
          this.cache.delete(key);
          this.options.onChange('deleted', object);
        } else {
          const known = this.cache.has(key);
          this.cache.set(key, object);
          this.options.onChange(known ? 'modified' : 'added', object);
        }
      },
      (err: unknown) => {
        if (this.stopped) return;
        if (err) this.options.onError?.(err);
        if (gone || httpStatusOf(err) === 410) this.resourceVersion = undefined;
        this.scheduleResume(err ? this.nextBackoff() : 0);
      },
    );
    if (this.stopped) this.abort.abort();
  }

  private nextBackoff(): number {
    const delay = this.backoffMs;
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
    return delay;
  }

  private scheduleResume(delayMs: number): void {
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.resume(), delayMs);
  }

  private async resume(): Promise<void> {
    if (this.stopped) return;
    try {
      if (this.resourceVersion === undefined) await this.relist();
      await this.watch();
    } catch (err) {
      this.options.onError?.(err);
      this.scheduleResume(this.nextBackoff());
    }
  }
}
