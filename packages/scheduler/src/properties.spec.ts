import fc from 'fast-check';
import { runCycle } from './cycle';
import { migProfile, validateMigLayout } from './mig-geometry';
import type { ClusterSnapshot, GpuState, NodeState, PendingJob, TopologyLevel } from './types';

const MODELS = ['H100-80GB', 'A100-80GB'] as const;
const LAYOUTS = [
  [
    ['3g.40gb', 4],
    ['2g.20gb', 2],
    ['1g.10gb', 0],
    ['1g.10gb', 1],
  ],
  [
    ['4g.40gb', 0],
    ['3g.40gb', 4],
  ],
  [['7g.80gb', 0]],
  [
    ['1g.10gb', 0],
    ['1g.10gb', 1],
    ['1g.10gb', 2],
    ['1g.10gb', 3],
    ['1g.10gb', 4],
    ['1g.10gb', 5],
    ['1g.10gb', 6],
  ],
] as const;

const gpuArb = (nodeId: string, index: number) =>
  fc
    .record({
      model: fc.constantFrom(...MODELS),
      kind: fc.constantFrom('whole', 'whole', 'mig', 'shared'),
      layout: fc.nat(LAYOUTS.length - 1),
      used: fc.nat(1000),
      busy: fc.boolean(),
      healthy: fc.boolean(),
    })
    .map((g): GpuState => {
      const base: GpuState = {
        id: `${nodeId}/g${index}`,
        index,
        model: g.model,
        nvlinkDomain: index < 4 ? 0 : 1,
        healthy: g.healthy || index % 3 !== 0,
        schedulable: true,
        mode: g.kind as GpuState['mode'],
        allocated: g.kind === 'whole' && g.busy,
        sharedMilliUsed: g.kind === 'shared' ? g.used : 0,
        mig: [],
      };
      if (g.kind === 'mig')
        base.mig = LAYOUTS[g.layout]!.map(([p, s], i) => ({ profile: p, start: s, size: migProfile(g.model, p)!.size, busy: g.busy && i % 2 === 0 }));
      return base;
    });

const nodeArb = (i: number) =>
  fc.record({ gpus: fc.integer({ min: 0, max: 8 }), cpu: fc.integer({ min: 0, max: 64 }), mem: fc.integer({ min: 0, max: 256 }), leaf: fc.nat(2) }).chain((n) =>
    fc.tuple(...Array.from({ length: n.gpus }, (_, k) => gpuArb(`n${i}`, k))).map((gpus): NodeState => ({
      id: `n${i}`,
      name: `n${i}`,
      leaf: `leaf-${n.leaf}`,
      spine: `spine-${n.leaf % 2}`,
      schedulable: true,
      persona: 'container',
      cpuMilli: 64000,
      memoryMiB: 256 * 1024,
      cpuMilliFree: n.cpu * 1000,
      memoryMiBFree: n.mem * 1024,
      gpus,
    })),
  );

const snapshotArb = fc
  .integer({ min: 1, max: 6 })
  .chain((count) => fc.tuple(...Array.from({ length: count }, (_, i) => nodeArb(i))).map((nodes): ClusterSnapshot => ({ nodes })));

const jobArb = (i: number) =>
  fc
    .record({
      kind: fc.constantFrom('whole', 'share', 'mig', 'cpu'),
      gpus: fc.integer({ min: 1, max: 8 }),
      milli: fc.integer({ min: 1, max: 999 }),
      profile: fc.constantFrom('1g.10gb', '2g.20gb', '3g.40gb', '7g.80gb'),
      replicas: fc.integer({ min: 1, max: 4 }),
      level: fc.constantFrom<TopologyLevel>('node', 'leaf', 'spine', 'any'),
      required: fc.boolean(),
      cpu: fc.integer({ min: 0, max: 16 }),
      mem: fc.integer({ min: 0, max: 64 }),
      priority: fc.nat(2),
      model: fc.option(fc.constantFrom(...MODELS), { nil: undefined }),
    })
    .map((j): PendingJob => ({
      id: `j${i}`,
      teamId: `t${i % 3}`,
      priority: j.priority,
      createdAtMs: i,
      replicas: j.replicas,
      request: {
        cpuMilli: j.cpu * 1000,
        memoryMiB: j.mem * 1024,
        ...(j.kind === 'whole' ? { gpus: j.gpus } : j.kind === 'share' ? { gpuMilli: j.milli } : j.kind === 'mig' ? { migProfile: j.profile } : {}),
        ...(j.model ? { gpuModels: [j.model] } : {}),
      },
      topology: { level: j.level, required: j.required },
    }));

const jobsArb = fc.integer({ min: 1, max: 10 }).chain((count) => fc.tuple(...Array.from({ length: count }, (_, i) => jobArb(i))));

describe('placement invariants (property tests)', () => {
  it('never overlaps MIG slices, exceeds 1000 milli, oversubscribes CPU/memory, breaks a gang or a required topology', () => {
    fc.assert(
      fc.property(snapshotArb, jobsArb, (snap, jobs) => {
        const d = runCycle(snap, jobs);
        const byNode = new Map(snap.nodes.map((n) => [n.id, n]));
        const cpu = new Map<string, number>();
        const mem = new Map<string, number>();
        const wholeUsed = new Set<string>();
        const milli = new Map<string, number>();
        const slices = new Set<string>();
        for (const p of d.placed) {
          const j = jobs.find((x) => x.id === p.jobId)!;
          // gang: all replicas or none
          expect(p.replicas).toHaveLength(j.replicas);
          // required topology
          if (j.topology.required && j.topology.level !== 'any') {
            const keys = new Set(
              p.replicas.map((r) => {
                const n = byNode.get(r.nodeId)!;
                return j.topology.level === 'node' ? n.id : j.topology.level === 'leaf' ? n.leaf : n.spine;
              }),
            );
            expect(keys.size).toBe(1);
          }
          for (const r of p.replicas) {
            const n = byNode.get(r.nodeId)!;
            cpu.set(n.id, (cpu.get(n.id) ?? 0) + j.request.cpuMilli);
            mem.set(n.id, (mem.get(n.id) ?? 0) + j.request.memoryMiB);
            for (const pg of r.gpus) {
              const g = n.gpus.find((x) => x.id === pg.gpuId)!;
              expect(g.healthy && g.schedulable).toBe(true);
              if (j.request.gpuModels) expect(j.request.gpuModels).toContain(g.model);
              if (pg.migProfile !== undefined) {
                const slice = g.mig.find((s) => s.start === pg.migStart && s.profile === pg.migProfile)!;
                expect(slice.busy).toBe(false);
                const key = `${g.id}@${pg.migStart}`;
                expect(slices.has(key)).toBe(false);
                slices.add(key);
              } else if (pg.milli !== undefined) {
                expect(g.mode === 'shared' || (g.mode === 'whole' && !g.allocated)).toBe(true);
                milli.set(g.id, (milli.get(g.id) ?? 0) + pg.milli);
                expect(g.sharedMilliUsed + milli.get(g.id)!).toBeLessThanOrEqual(1000);
                expect(wholeUsed.has(g.id)).toBe(false);
              } else {
                expect(g.mode).toBe('whole');
                expect(g.allocated).toBe(false);
                expect(wholeUsed.has(g.id) || milli.has(g.id)).toBe(false);
                wholeUsed.add(g.id);
              }
            }
            if (j.request.gpus) expect(r.gpus).toHaveLength(j.request.gpus);
          }
        }
        for (const [id, c] of cpu) expect(c).toBeLessThanOrEqual(byNode.get(id)!.cpuMilliFree);
        for (const [id, m] of mem) expect(m).toBeLessThanOrEqual(byNode.get(id)!.memoryMiBFree);
        // MIG layouts in the snapshot stay valid (the engine only uses existing slices)
        for (const n of snap.nodes) for (const g of n.gpus) if (g.mode === 'mig') expect(validateMigLayout(g.model, g.mig).ok).toBe(true);
        // every job is either placed or pending with a reason
        expect(d.placed.length + d.pending.length).toBe(jobs.length);
        for (const p of d.pending) expect(p.reasons.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('same input gives the same decisions', () => {
    fc.assert(
      fc.property(snapshotArb, jobsArb, (snap, jobs) => {
        const a = runCycle(snap, jobs);
        const b = runCycle(structuredClone(snap), structuredClone(jobs));
        expect(b).toEqual(a);
      }),
      { numRuns: 100 },
    );
  });
});
