/** Test builders: node().gpus(8, 'H100-80GB').leaf('l1')..., job().gpus(2)... */
import type { GpuState, MigSliceState, NodeState, PendingJob, Persona, TopologyLevel } from '../types';
import { migProfile } from '@gantry/contracts';

let seq = 0;

export class NodeBuilder {
  private n: NodeState;
  constructor(id = `node-${++seq}`) {
    this.n = {
      id,
      name: id,
      leaf: 'leaf-1',
      spine: 'spine-1',
      schedulable: true,
      persona: 'container',
      cpuMilli: 128000,
      memoryMiB: 1024 * 1024,
      cpuMilliFree: 128000,
      memoryMiBFree: 1024 * 1024,
      gpus: [],
    };
  }
  /** Adds `count` whole GPUs; NVLink domains of 4 GPUs unless `domainSize` says otherwise. */
  gpus(count: number, model = 'H100-80GB', domainSize = 4): this {
    const start = this.n.gpus.length;
    for (let i = 0; i < count; i++) {
      const index = start + i;
      this.n.gpus.push({
        id: `${this.n.id}/gpu${index}`,
        index,
        model,
        nvlinkDomain: Math.floor(index / domainSize),
        healthy: true,
        schedulable: true,
        mode: 'whole',
        allocated: false,
        sharedMilliUsed: 0,
        mig: [],
      });
    }
    return this;
  }
  /** Turns GPU `index` into MIG mode with the given slices (`'3g.40gb@4'`, `'1g.10gb@0*'` = busy). */
  mig(index: number, ...slices: string[]): this {
    const g = this.gpu(index);
    g.mode = 'mig';
    g.mig = slices.map((s): MigSliceState => {
      const m = /^(.+)@(\d)(\*?)$/.exec(s)!;
      const p = migProfile(g.model, m[1]!)!;
      return { profile: p.name, start: Number(m[2]), size: p.size, busy: m[3] === '*' };
    });
    return this;
  }
  shared(index: number, milliUsed: number): this {
    const g = this.gpu(index);
    g.mode = 'shared';
    g.sharedMilliUsed = milliUsed;
    return this;
  }
  allocated(...indices: number[]): this {
    for (const i of indices) this.gpu(i).allocated = true;
    return this;
  }
  unhealthy(...indices: number[]): this {
    for (const i of indices) this.gpu(i).healthy = false;
    return this;
  }
  cpu(total: number, free = total): this {
    this.n.cpuMilli = total;
    this.n.cpuMilliFree = free;
    return this;
  }
  memory(total: number, free = total): this {
    this.n.memoryMiB = total;
    this.n.memoryMiBFree = free;
    return this;
  }
  leaf(leaf: string, spine = this.n.spine): this {
    this.n.leaf = leaf;
    this.n.spine = spine;
    return this;
  }
  persona(p: Persona): this {
    this.n.persona = p;
    return this;
  }
  cordoned(): this {
    this.n.schedulable = false;
    return this;
  }
  private gpu(i: number): GpuState {
    return this.n.gpus[i]!;
  }
  build(): NodeState {
    return structuredClone(this.n);
  }
}

export class JobBuilder {
  private j: PendingJob;
  constructor(id = `job-${++seq}`) {
    this.j = {
      id,
      teamId: 'team-a',
      priority: 0,
      createdAtMs: seq,
      replicas: 1,
      request: { cpuMilli: 1000, memoryMiB: 1024 },
      topology: { level: 'any', required: false },
    };
  }
  gpus(n: number): this {
    this.j.request.gpus = n;
    return this;
  }
  share(milli: number): this {
    this.j.request.gpuMilli = milli;
    return this;
  }
  migSlice(profile: string): this {
    this.j.request.migProfile = profile;
    return this;
  }
  models(...m: string[]): this {
    this.j.request.gpuModels = m;
    return this;
  }
  cpu(milli: number): this {
    this.j.request.cpuMilli = milli;
    return this;
  }
  memory(mib: number): this {
    this.j.request.memoryMiB = mib;
    return this;
  }
  replicas(n: number): this {
    this.j.replicas = n;
    return this;
  }
  topology(level: TopologyLevel, required = true): this {
    this.j.topology = { level, required };
    return this;
  }
  team(t: string): this {
    this.j.teamId = t;
    return this;
  }
  priority(p: number): this {
    this.j.priority = p;
    return this;
  }
  createdAt(ms: number): this {
    this.j.createdAtMs = ms;
    return this;
  }
  persona(p: Persona): this {
    this.j.persona = p;
    return this;
  }
  build(): PendingJob {
    return structuredClone(this.j);
  }
}

export const node = (id?: string) => new NodeBuilder(id);
export const job = (id?: string) => new JobBuilder(id);
