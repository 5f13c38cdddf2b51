import { demoWeek, type DemoTeam } from './demo-week';

const teams: DemoTeam[] = [
  { id: 'research', tenantId: 'acme', slug: 'research', limit: 192 },
  { id: 'inference', tenantId: 'acme', slug: 'inference', limit: 64 },
];
// Monday 2026-11-30 00:00 UTC, one week
const startMs = Date.UTC(2026, 10, 30);
const week = (seed = 7) => demoWeek({ teams, startMs, seconds: 7 * 86_400, mig: { gpuModel: 'A100-80GB', profile: '1g.10gb' }, faults: 2, seed });
const hourOf = (arrival: number) => new Date(startMs + arrival * 1000).getUTCHours();
const isDay = (arrival: number) => hourOf(arrival) >= 8 && hourOf(arrival) < 19;

describe('demoWeek', () => {
  it('is the same week for the same seed, another for another seed', () => {
    expect(week(7)).toEqual(week(7));
    expect(week(8).length).not.toBe(week(7).length);
  });

  it('has a daily rhythm: notebooks and batch inference by day, training mostly at night', () => {
    const jobs = week();
    const share = (kind: string) => {
      const of = jobs.filter((j) => j.kind === kind);
      return of.filter((j) => isDay(j.arrival)).length / of.length;
    };
    expect(share('notebook')).toBeGreaterThan(0.8);
    expect(share('batch')).toBeGreaterThan(0.6);
    expect(share('training')).toBeLessThan(0.3);
  });

  it('is quieter at weekends, sends an inference team mostly batch inference, and has MIG notebooks and faults', () => {
    const jobs = week();
    const weekend = jobs.filter((j) => j.arrival >= 5 * 86_400).length / 2;
    const weekday = jobs.filter((j) => j.arrival < 5 * 86_400).length / 5;
    expect(weekend).toBeLessThan(weekday * 0.6);
    const inference = jobs.filter((j) => j.teamId === 'inference');
    expect(inference.filter((j) => j.kind === 'batch').length / inference.length).toBeGreaterThan(0.8);
    expect(inference.some((j) => j.kind === 'training')).toBe(false);
    expect(jobs.some((j) => j.resources.migProfile === '1g.10gb' && j.resources.gpuModel === 'A100-80GB')).toBe(true);
    const faulty = jobs.filter((j) => j.faultAfter !== undefined);
    expect(faulty).toHaveLength(2);
    for (const j of faulty) {
      expect(j.kind).toBe('training');
      expect(j.faultAfter).toBeGreaterThan(0);
      expect(j.faultAfter).toBeLessThan(j.duration);
    }
    expect(jobs.every((j, i) => i === 0 || jobs[i - 1]!.arrival <= j.arrival)).toBe(true);
  });
});
