/**
 * The queue order of each tenant (or of the whole cluster, for the platform), kept for the
 * requests that show queue positions. Ordering a queue reads every pending job of it (10,000 when
 * it is deep) and replays the fair-share rule over them: far too much for every page of a job
 * list, and a console polling ten pages of jobs asked for it ten times per refresh.
 *
 * A list gets the last order while it is younger than `freshMs`; up to `staleMs` it still gets
 * it and a new ordering starts behind it, so no page waits on one; older, the page waits for a new
 * one. A job submitted since the last ordering has no position on a list until the next one. A
 * single job's position (`including`) is always from an ordering that holds it: one started after
 * its request began when the last one does not. Requests arriving together share one ordering.
 */

/** One pending job in queue order: its id and team. */
export interface QueuedJob {
  id: string;
  teamId: string;
}

export interface QueueOrder {
  /** When the ordering began (its reads saw every change committed before then). */
  at: number;
  jobs: QueuedJob[];
  /** Position (1 = next) of each job in `jobs`. */
  position: Map<string, number>;
}

type Load = () => Promise<QueuedJob[]>;

export class QueueOrderMemo {
  private readonly orders = new Map<string, QueueOrder>();
  private readonly loading = new Map<string, { startedAt: number; order: Promise<QueueOrder> }>();

  constructor(
    private readonly freshMs = 1_000,
    private readonly staleMs = 30_000,
    private readonly maxQueues = 1_000,
    private readonly onBackgroundError: (e: unknown) => void = () => undefined,
  ) {}

  /** The order for a page of a list (see the header). */
  async forList(key: string, load: Load, now = Date.now()): Promise<QueueOrder> {
    const last = this.orders.get(key);
    if (!last || now - last.at >= this.staleMs) return this.refresh(key, load, now);
    if (now - last.at >= this.freshMs) this.inBackground(key, load, now);
    return last;
  }

  /** Asks for a new ordering behind the current answer when none is under way (a job newer than the order was seen). */
  behind(key: string, load: Load, now = Date.now()): void {
    if (!this.loading.has(key)) this.inBackground(key, load, now);
  }

  /** An order holding `jobId` if it was pending when the request began at `since`: the last one if fresh and holding it, else a new one. */
  async including(key: string, jobId: string, load: Load, since = Date.now()): Promise<QueueOrder> {
    const last = this.orders.get(key);
    if (last && since - last.at < this.freshMs && last.position.has(jobId)) return last;
    const flight = this.loading.get(key);
    if (flight && flight.startedAt >= since) return flight.order;
    return this.refresh(key, load, since, true);
  }

  private inBackground(key: string, load: Load, now: number): void {
    this.refresh(key, load, now).catch(this.onBackgroundError);
  }

  /** Starts an ordering (or joins the one under way unless `fresh`), kept when it is newer than the stored one. */
  private refresh(key: string, load: Load, now: number, fresh = false): Promise<QueueOrder> {
    const flight = this.loading.get(key);
    if (flight && !fresh) return flight.order;
    const order = load().then((jobs) => {
      const made: QueueOrder = { at: now, jobs, position: new Map(jobs.map((j, i) => [j.id, i + 1])) };
      this.store(key, made);
      return made;
    });
    this.loading.set(key, { startedAt: now, order });
    const done = () => {
      if (this.loading.get(key)?.order === order) this.loading.delete(key);
    };
    order.then(done, done);
    return order;
  }

  private store(key: string, made: QueueOrder): void {
    const last = this.orders.get(key);
    if (last && last.at > made.at) return;
    this.orders.delete(key);
    if (this.orders.size >= this.maxQueues) this.orders.delete(this.orders.keys().next().value!);
    this.orders.set(key, made);
  }
}
