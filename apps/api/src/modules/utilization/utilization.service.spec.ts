import { MAX_UTILIZATION_POINTS, MAX_UTILIZATION_RANGE_DAYS } from '@gantry/contracts';
import { parseConfig } from '../../config/config';
import { DomainError } from '../../common/errors';
import type { Principal } from '../../common/principal';
import { resolveWindow, UtilizationService } from './utilization.service';
import type { UsageRows, UtilizationRepository } from './utilization.repository';

const now = new Date('2026-11-30T12:00:00Z');

describe('resolveWindow', () => {
  it.each([
    { name: 'from after to', q: { from: '2026-11-30T12:00:00Z', to: '2026-11-30T11:00:00Z' }, wantMessage: /`from` must be before `to`/ },
    { name: 'from equal to to', q: { from: '2026-11-30T12:00:00Z', to: '2026-11-30T12:00:00Z' }, wantMessage: /before/ },
    { name: 'a step under a minute', q: { step: 30 }, wantMessage: /whole number of minutes/ },
    { name: 'a step that is not whole minutes', q: { step: 90 }, wantMessage: /whole number of minutes/ },
    {
      name: 'too many points',
      q: { from: '2026-10-01T00:00:00Z', to: '2026-11-30T00:00:00Z', step: 60 },
      wantMessage: new RegExp(`limit is ${MAX_UTILIZATION_POINTS} points`),
    },
    {
      name: 'a range longer than the most days a report spans',
      q: { from: '2026-08-01T00:00:00Z', to: '2026-11-30T00:00:00Z', step: 86400 },
      wantMessage: new RegExp(`at most ${MAX_UTILIZATION_RANGE_DAYS} days`),
    },
  ])('refuses $name with a 400 naming the rule', ({ q, wantMessage }) => {
    let err: unknown;
    try {
      resolveWindow(q, now);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('validation_failed');
    expect((err as DomainError).message).toMatch(wantMessage);
  });

  it.each([
    { name: 'the last 24 h by default, in 15-minute buckets of minute rollups', q: {}, wantFrom: '2026-11-29T12:00:00.000Z', wantStep: 900, wantRollup: 60 },
    {
      name: '30 days in hours reads hour rollups',
      q: { from: '2026-10-31T12:00:00Z', step: 3600 },
      wantFrom: '2026-10-31T12:00:00.000Z',
      wantStep: 3600,
      wantRollup: 3600,
    },
    {
      name: 'days in days read day rollups',
      q: { from: '2026-10-31T12:00:00Z', step: 86400 },
      wantFrom: '2026-10-31T00:00:00.000Z',
      wantStep: 86400,
      wantRollup: 86400,
    },
    {
      name: 'from is aligned down to the step',
      q: { from: '2026-11-30T11:07:00Z', step: 300 },
      wantFrom: '2026-11-30T11:05:00.000Z',
      wantStep: 300,
      wantRollup: 60,
    },
  ])('$name', ({ q, wantFrom, wantStep, wantRollup }) => {
    const w = resolveWindow(q, now);
    expect(w.from.toISOString()).toBe(wantFrom);
    expect(w.stepSeconds).toBe(wantStep);
    expect(w.rollupSeconds).toBe(wantRollup);
  });
});

describe('UtilizationService.report', () => {
  /** One hour of H100 (or another model) for team-a in bucket k: 1 GPU-hour allocated, half of it busy, 1 kWh. */
  const cell = (over: { k?: number; gpuModel?: string }): UsageRows => ({
    key: 'team-a',
    gpuModel: over.gpuModel ?? 'H100-80GB',
    k: [over.k ?? 0],
    c: [0],
    a: [3600],
    b: [1800],
    m: [0],
    e: [3.6e6],
    i: [900],
  });
  const service = (cells: UsageRows[]) => {
    const repo = {
      usage: jest.fn().mockResolvedValue(cells),
      labels: jest.fn().mockResolvedValue(new Map([['team-a', 'Team A']])),
      teamsNow: jest.fn().mockResolvedValue(new Map([['team-a', { allocatedGpus: 2, quotaGuaranteed: 8, quotaLimit: 16 }]])),
      nodeCapacity: jest.fn().mockResolvedValue(new Map([['node-1', { gpuCount: 8, gpuModel: 'H100-80GB', migLayout: 'gpu 0: 3g.40gb+4g.40gb' }]])),
      savedWattSeconds: jest.fn().mockResolvedValue(0),
    } as unknown as UtilizationRepository;
    return { repo, svc: new UtilizationService(repo, parseConfig({})) };
  };
  const member: Principal = { keyId: 'k', name: 'm', role: 'member', scopes: ['cluster:read'], tenantId: 't1', teamId: null };

  it('sums GPU-hours per team, prices them per model and estimates the energy from idle and busy watts', async () => {
    const { svc, repo } = service([cell({}), cell({ k: 1, gpuModel: 'A100-80GB' })]);
    const r = await svc.report(member, { groupBy: 'team', from: '2026-11-30T10:00:00Z', to: '2026-11-30T12:00:00Z', step: 3600 }, now);
    expect(repo.usage).toHaveBeenCalledWith(
      { kind: 'tenant', tenantId: 't1', teamId: null },
      expect.objectContaining({ groupBy: 'team', rollupSeconds: 3600 }),
    );
    expect(r.series).toHaveLength(1);
    const s = r.series[0]!;
    expect(s.label).toBe('Team A');
    expect(s.now).toEqual({ allocatedGpus: 2, quotaGuaranteed: 8, quotaLimit: 16 });
    expect(s.points.map((p) => p.allocatedGpuHours)).toEqual([1, 1]);
    // 1 h of H100 at 2.49 + 1 h of A100 at 1.79
    expect(s.totals).toMatchObject({
      allocatedGpuHours: 2,
      busyGpuHours: 1,
      smRatio: 0.5,
      energyKWh: 2,
      cost: 4.28,
      capacityGpuHours: null,
      idleGpuHours: 0.5,
    });
    expect(s.points.map((p) => p.idleGpuHours)).toEqual([0.25, 0.25]);
    // H100: 0.5 h at 700 W + 0.5 h at 70 W; A100: 0.5 h at 400 W + 0.5 h at 55 W
    expect(s.totals.energyEstimateKWh).toBeCloseTo((0.5 * 700 + 0.5 * 70 + 0.5 * 400 + 0.5 * 55) / 1000, 4);
  });

  it('renders CSV with one line per group and bucket', async () => {
    const { svc } = service([cell({})]);
    const csv = await svc.reportCsv(member, { groupBy: 'team', from: '2026-11-30T11:00:00Z', to: '2026-11-30T12:00:00Z', step: 3600 }, now);
    expect(csv.split('\n')[0]).toBe(
      'team,label,bucket_start,capacity_gpu_hours,allocated_gpu_hours,busy_gpu_hours,idle_gpu_hours,allocation_ratio,sm_ratio,memory_used_mib,energy_kwh,cost_usd',
    );
    expect(csv.split('\n')[1]).toBe('team-a,Team A,2026-11-30T11:00:00.000Z,,1,0.5,0.25,,0.5,0,1,2.49');
  });

  it("gives each node row of the per-node CSV the node's capacity: GPU count, model and MIG layout", async () => {
    const { svc, repo } = service([{ ...cell({}), key: 'node-1' }]);
    (repo.labels as jest.Mock).mockResolvedValue(new Map([['node-1', 'h100-s0-l0-n0']]));
    const admin: Principal = { keyId: 'k', name: 'a', role: 'platform-admin', scopes: ['cluster:read'], tenantId: null, teamId: null };
    const csv = await svc.reportCsv(admin, { groupBy: 'node', from: '2026-11-30T11:00:00Z', to: '2026-11-30T12:00:00Z', step: 3600 }, now);
    const [head, first] = csv.split('\n');
    expect(head).toMatch(/^node,label,gpu_count,gpu_model,mig_layout,bucket_start,/);
    expect(first).toMatch(/^node-1,h100-s0-l0-n0,8,H100-80GB,gpu 0: 3g.40gb\+4g.40gb,2026-11-30T11:00:00.000Z,/);
  });
});
