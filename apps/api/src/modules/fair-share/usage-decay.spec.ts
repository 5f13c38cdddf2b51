import { decayedAverageGpus, decayFactor, holdingContribution, rollUsage, type DecayParams, type Holding } from './usage-decay';

const H = 3600;
const p: DecayParams = { halfLifeSeconds: H, simSpeed: 1 };
const s = (x: number) => x * 1000;

describe('decayed usage', () => {
  it.each([
    ['one half-life halves', 0, H, 0.5],
    ['two half-lives quarter', 0, 2 * H, 0.25],
    ['no time, no decay', 5, 5, 1],
  ])('%s', (_, from, to, want) => {
    expect(decayFactor(s(from), s(to), p)).toBeCloseTo(want, 10);
  });

  it('cluster time runs GANTRY_SIM_SPEED times faster: 72 wall-clock seconds at speed 50 are one half-life', () => {
    expect(decayFactor(0, s(72), { halfLifeSeconds: H, simSpeed: 50 })).toBeCloseTo(0.5, 10);
  });

  it('a team that held G GPUs for ever averages G decayed GPUs', () => {
    const h: Holding = { teamId: 't', gpus: 6, startMs: s(-40 * H), endMs: null };
    expect(decayedAverageGpus(holdingContribution(h, s(-40 * H), 0, p), p)).toBeCloseTo(6, 6);
  });

  it('rolling in many small steps gives exactly what one roll over the whole gap gives (a restart loses nothing)', () => {
    const holdings: Holding[] = [
      { teamId: 'a', gpus: 8, startMs: s(-2 * H), endMs: s(1000) },
      { teamId: 'a', gpus: 2, startMs: s(500), endMs: null },
      { teamId: 'b', gpus: 1.5, startMs: s(2000), endMs: s(3000) },
    ];
    const since = s(-10 * H);
    const once = rollUsage(new Map(), holdings, ['a', 'b', 'c'], s(4000), since, p);
    let records = new Map();
    let from = since;
    for (const t of [0, 700, 1000, 2500, 4000]) {
      records = rollUsage(records, holdings, ['a', 'b', 'c'], s(t), from, p);
      from = s(t);
    }
    for (const team of ['a', 'b', 'c']) expect(records.get(team).gpuSeconds).toBeCloseTo(once.get(team)!.gpuSeconds, 6);
    expect(once.get('c')!.gpuSeconds).toBe(0);
    expect(once.get('a')!.gpuSeconds).toBeGreaterThan(once.get('b')!.gpuSeconds);
  });
});
