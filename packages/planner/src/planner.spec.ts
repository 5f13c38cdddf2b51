import {
  PlannerInputError,
  Replay,
  applyMigPolicies,
  parseOpenbTrace,
  policySetup,
  runPlan,
  wholeGpuRequest,
  workloadShapes,
  type PlannerJob,
  type PlannerNode,
} from './index';

const HEAD = 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time';

describe('parseOpenbTrace', () => {
  it.each([
    ['a missing column', 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\np,1,1,1,1000,0', /row 0: deletion_time: missing column/],
    ['a malformed number', `${HEAD}\np0,abc,1,1,1000,,LS,Running,0,10,0`, /row 1: cpu_milli: is not an integer/],
    ['a negative duration', `${HEAD}\np0,1,1,1,1000,,LS,Running,0,10,0\np1,1,1,1,1000,,LS,Running,50,20,40`, /row 2: deletion_time: is before scheduled_time/],
    ['an unknown GPU model', `${HEAD}\np0,1,1,1,1000,X200,LS,Running,0,10,0`, /row 1: gpu_spec: unknown GPU model "X200"/],
  ])('refuses %s, naming the row and field', (_name, text, wantMessage) => {
    expect(() => parseOpenbTrace(text)).toThrow(PlannerInputError);
    expect(() => parseOpenbTrace(text)).toThrow(wantMessage);
  });

  it('reads arrivals and run times (deletion - scheduled), shifted to start at 0', () => {
    const jobs = parseOpenbTrace(`${HEAD}\np0,1000,10,1,500,,LS,Running,100,400,150\np1,1000,10,2,1000,T4,LS,Running,120,220,120`);
    expect(jobs.map((j) => [j.id, j.arrival, j.duration])).toEqual([
      ['p0', 0, 250],
      ['p1', 20, 100],
    ]);
    expect(jobs[0]!.request).toEqual({ cpuMilli: 1000, memoryMiB: 10, gpuMilli: 500 });
    expect(jobs[1]!.request).toEqual({ cpuMilli: 1000, memoryMiB: 10, gpus: 2, gpuModels: ['T4'] });
  });
});

describe('kubernetes-default request', () => {
  it.each([
    [{ cpuMilli: 1, memoryMiB: 1, gpuMilli: 300 }, 1],
    [{ cpuMilli: 1, memoryMiB: 1, migProfile: '1g.10gb' }, 1],
    [{ cpuMilli: 1, memoryMiB: 1, gpus: 4 }, 4],
  ])('%j takes %d whole GPUs', (req, wantGpus) => {
    expect(wholeGpuRequest(req)).toEqual({ cpuMilli: 1, memoryMiB: 1, gpus: wantGpus });
  });
});

function node(id: string, gpus = 2): PlannerNode {
  return { id, model: 'A100-80GB', gpus, cpuMilli: 64000, memoryMiB: 256000 };
}
function share(i: number, arrival: number, duration: number, milli = 400): PlannerJob {
  return { id: `j${i}`, teamId: 't', arrival, duration, replicas: 1, priority: 0, request: { cpuMilli: 1000, memoryMiB: 1000, gpuMilli: milli } };
}

describe('runPlan', () => {
  it('queues shares under kubernetes-default (a whole GPU each) and packs them under gantry', () => {
    // 4 shares of 0.4 arriving together on one node of 2 GPUs: gantry runs them at once (2 per GPU),
    // kubernetes-default runs 2, the other 2 wait for the first to finish
    const jobs = [0, 1, 2, 3].map((i) => share(i, 0, 100));
    const r = runPlan({ nodes: [node('n0')], jobs, policies: ['gantry', 'kubernetes-default'], power: null });
    const g = r.policies.find((p) => p.policy === 'gantry')!;
    const k = r.policies.find((p) => p.policy === 'kubernetes-default')!;
    expect([g.waitMaxSeconds, k.waitMaxSeconds]).toEqual([0, 100]);
    expect(r.horizonSeconds).toBe(200);
    // same work (4 x 0.4 x 100 GPU-s) over the same 200 s on 2 GPUs: 40% both; the gain shows as
    // SM per busy GPU (gantry 80%, kubernetes 40%)
    expect([g.gpuUtilisationPct, k.gpuUtilisationPct]).toEqual([40, 40]);
    expect([g.smPerBusyGpuPct, k.smPerBusyGpuPct]).toEqual([80, 40]);
  });

  it('powers empty nodes down after the idle time and boots one for queued demand', () => {
    const nodes = ['a', 'b', 'c', 'd'].map((id) => node(id));
    const whole = (i: number): PlannerJob => ({ ...share(i, 5000, 10), request: { cpuMilli: 1000, memoryMiB: 1000, gpus: 2 } });
    const jobs = [share(0, 0, 10), whole(1), whole(2)];
    const power = { idleSeconds: 600, headroom: 0, bootSeconds: 120, shutdownSeconds: 30 };
    const r = runPlan({ nodes, jobs, policies: ['gantry'], power, compareWithoutPower: true });
    const g = r.policies[0]!;
    // three of four down at 600 s (one node of the model stays on); at 5000 s one job fits on it,
    // the other boots a node (120 s) but takes the first one's node when it leaves at 5010 s
    expect(g.powerDowns).toBe(3);
    expect(g.powerUps).toBe(1);
    expect(g.unplaced).toBe(0);
    expect(g.waitMaxSeconds).toBe(10);
    expect(g.energyKWh).toBeLessThan(g.energyWithoutPowerManagementKWh!);
  });

  it('refuses a cluster on which no job fits', () => {
    const jobs = [{ ...share(0, 0, 10), request: { cpuMilli: 1, memoryMiB: 1, gpus: 8 } }];
    expect(() => runPlan({ nodes: [node('n0')], jobs, policies: ['gantry'] })).toThrow(/cluster: nodes: no node fits any job/);
  });

  it('refuses an unknown policy', () => {
    expect(() => runPlan({ nodes: [node('n0')], jobs: [share(0, 0, 1)], policies: ['volcano'] })).toThrow(/policies row 1: policies: unknown policy "volcano"/);
  });
});

describe('what-if MIG policy', () => {
  const slices = Array.from({ length: 7 }, (_, start) => ({ profile: '1g.10gb', start }));
  const mig = (i: number, arrival: number): PlannerJob => ({
    id: `m${i}`,
    teamId: 't',
    arrival,
    duration: 100,
    replicas: 1,
    priority: 0,
    request: { cpuMilli: 1000, memoryMiB: 1000, migProfile: '1g.10gb' },
  });

  it('runs MIG jobs on the slices of the layout, under gantry and kubernetes-default (mixed strategy)', () => {
    // one node of 2 A100s cut into 7 x 1g.10gb each: 14 MIG jobs at once, none waits
    const nodes = applyMigPolicies([node('n0')], [{ model: 'A100-80GB', layout: slices }]);
    expect(nodes[0]!.migLayout).toHaveLength(7);
    const jobs = Array.from({ length: 14 }, (_, i) => mig(i, 0));
    const r = runPlan({ nodes, jobs, policies: ['gantry', 'kubernetes-default'], power: null });
    for (const p of r.policies) expect([p.policy, p.placed, p.waitMaxSeconds]).toEqual([p.policy, 14, 0]);
    // a 15th job waits for a slice
    const more = runPlan({ nodes, jobs: [...jobs, mig(14, 0)], policies: ['gantry'], power: null });
    expect(more.policies[0]!.waitMaxSeconds).toBe(100);
  });

  it('without the layout the same MIG jobs find no slice under gantry and take whole GPUs under kubernetes-default', () => {
    const jobs = Array.from({ length: 4 }, (_, i) => mig(i, 0));
    const r = runPlan({ nodes: [node('n0')], jobs, policies: ['gantry', 'kubernetes-default'], power: null });
    const [g, k] = r.policies;
    expect(g!.unplaced).toBe(4);
    // 4 jobs, 2 whole GPUs: two wait for the first two
    expect([k!.placed, k!.waitMaxSeconds]).toEqual([4, 100]);
  });

  it('refuses an illegal layout and a model the cluster does not have, naming the row and field', () => {
    expect(() => applyMigPolicies([node('n0')], [{ model: 'A100-80GB', layout: [{ profile: '7g.80gb', start: 3 }] }])).toThrow(
      /row 1: mig.layout: illegal_start/,
    );
    expect(() => applyMigPolicies([node('n0')], [{ model: 'H100-80GB', layout: [] }])).toThrow(/row 1: mig.model: the cluster has no H100-80GB GPU/);
  });

  it('an empty layout turns MIG off', () => {
    const on = applyMigPolicies([node('n0')], [{ model: 'A100-80GB', layout: slices }]);
    expect(applyMigPolicies(on, [{ model: 'A100-80GB', layout: [] }])[0]!.migLayout).toBeUndefined();
  });
});

describe('Replay hooks (admission, starts and ends, a job submitted while it runs)', () => {
  const whole = (id: string, arrival: number, duration: number, teamId = 'a'): PlannerJob => ({
    id,
    teamId,
    arrival,
    duration,
    replicas: 1,
    request: { cpuMilli: 1000, memoryMiB: 1000, gpus: 1 },
    priority: 0,
  });
  const replay = (jobs: PlannerJob[], hooks: ConstructorParameters<typeof Replay>[5]) =>
    new Replay([node('n0', 4)], jobs, policySetup('gantry', workloadShapes(jobs)), null, 60, hooks);

  it('keeps a job queued while admission refuses it, and reports each start and end with its time', () => {
    const log: string[] = [];
    let held = 0;
    const jobs = [whole('j1', 0, 100), whole('j2', 10, 100)];
    replay(jobs, {
      admit: () => held < 1, // a team limit of one GPU
      onStart: (j, replicas, t) => {
        held++;
        log.push(`start ${j.id} ${t} ${replicas[0]!.nodeId}`);
      },
      onEnd: (j, _r, t) => {
        held--;
        log.push(`end ${j.id} ${t}`);
      },
    }).run();
    expect(log).toEqual(['start j1 0 n0', 'end j1 100', 'start j2 100 n0', 'end j2 200']);
  });

  it('plays a job submitted from a hook (a retry), and stops at `until`', () => {
    const log: string[] = [];
    const r: Replay = replay([whole('j1', 0, 50)], {
      onStart: (j, _r, t) => log.push(`start ${j.id} ${t}`),
      onEnd: (j, _r, t) => {
        log.push(`end ${j.id} ${t}`);
        if (j.id === 'j1') r.submit({ ...j, id: 'j1-retry', arrival: t + 5, duration: 20 });
      },
    });
    r.run(60);
    expect(log).toEqual(['start j1 0', 'end j1 50', 'start j1-retry 55']);
    r.run();
    expect(log.at(-1)).toBe('end j1-retry 75');
  });
});
