import { decide, windowAverage, type AutoscalerInput, type AutoscalerSettings, type TrafficSample } from './autoscaler';

const NOW = 1_000_000_000;
const nowSec = NOW / 1000;
const settings: AutoscalerSettings = { targetConcurrency: 100, minReplicas: 0, maxReplicas: 50, scaleToZeroAfterSeconds: 60 };

/** `seconds` samples ending now, each with this concurrency (rps = 0 so concurrency decides). */
const flat = (seconds: number, concurrency: number, endAgo = 0): TrafficSample[] =>
  Array.from({ length: seconds }, (_, i) => ({ t: nowSec - endAgo - i, rps: 0, concurrency }));

const input = (over: Partial<AutoscalerInput>): AutoscalerInput => ({
  nowMs: NOW,
  samples: [],
  readyReplicas: 1,
  currentDesired: 1,
  panicSinceMs: null,
  lastActivityMs: NOW,
  ...over,
});

describe('autoscaler maths (Knative defaults: target 100 x 70%, stable 60 s, panic 6 s at 200%)', () => {
  it.each([
    ['steady 140 in flight needs 2 replicas (70 each)', input({ samples: flat(60, 140), readyReplicas: 2, currentDesired: 2 }), 2, false],
    ['steady 141 in flight needs 3', input({ samples: flat(60, 141), readyReplicas: 2, currentDesired: 2 }), 3, false],
    ['a 6 s burst at 3x capacity panics and scales on the panic window', input({ samples: flat(6, 420), readyReplicas: 1 }), 6, true],
    ['a burst under 200% of ready capacity does not panic', input({ samples: flat(6, 130), readyReplicas: 1 }), 1, false],
    [
      'in panic, a lower recommendation does not scale down',
      input({ samples: flat(6, 70), readyReplicas: 6, currentDesired: 6, panicSinceMs: NOW - 10_000 }),
      6,
      true,
    ],
    [
      'panic ends one stable window after it was last renewed',
      input({ samples: flat(60, 70), readyReplicas: 6, currentDesired: 6, panicSinceMs: NOW - 60_000 }),
      3,
      false,
    ],
    ['scale-down is at most 2x per tick', input({ samples: flat(60, 1), readyReplicas: 8, currentDesired: 8 }), 4, false],
    ['scale-up is bounded by 1000x ready (then by maxReplicas)', input({ samples: flat(60, 1_000_000), readyReplicas: 1, currentDesired: 1 }), 50, true],
    ['from zero, the short window counts (burst just began)', input({ samples: flat(3, 210), readyReplicas: 0, currentDesired: 0 }), 2, false],
    [
      'RPS decides when it asks for more (200 x 70% per replica)',
      input({ samples: flat(60, 0).map((s) => ({ ...s, rps: 300 })), readyReplicas: 3, currentDesired: 3 }),
      3,
      false,
    ],
  ])('%s', (_name, inp, wantDesired, wantPanic) => {
    const d = decide(settings, inp);
    expect(d.desired).toBe(wantDesired);
    expect(d.panic).toBe(wantPanic);
  });

  it.each<[string, Partial<AutoscalerInput>, number, Partial<AutoscalerSettings>?]>([
    ['no traffic, idle less than the idle time: keeps one replica', { lastActivityMs: NOW - 30_000 }, 1],
    ['no traffic, idle for the idle time: goes to zero', { lastActivityMs: NOW - 60_000 }, 0],
    ['idle with 4 ready: scales down 2x per tick, not straight to zero', { lastActivityMs: NOW - 600_000, readyReplicas: 4, currentDesired: 4 }, 2],
    ['minReplicas 1 never goes to zero', { lastActivityMs: NOW - 600_000 }, 1, { minReplicas: 1 }],
    ['a manual scale in force is a floor', { lastActivityMs: NOW - 600_000, manualFloor: 3 }, 3],
    [
      'a request held by the activator keeps (or asks for) one replica, however long the idle time',
      { lastActivityMs: NOW - 600_000, readyReplicas: 0, currentDesired: 1, heldRequests: 1 },
      1,
    ],
  ])('scale to zero: %s', (_name, over, wantDesired, settingsOver = {}) => {
    expect(decide({ ...settings, ...settingsOver }, input(over)).desired).toBe(wantDesired);
  });

  it('averages over the whole window, counting seconds without samples as zero', () => {
    expect(windowAverage(flat(6, 60), nowSec, 60, 'concurrency')).toBeCloseTo(6);
    expect(windowAverage(flat(6, 60), nowSec, 6, 'concurrency')).toBeCloseTo(60);
    expect(windowAverage(flat(6, 60, 10), nowSec, 6, 'concurrency')).toBe(0);
  });
});
