/** Where drivers read the time (milliseconds since the epoch); tests may pass their own. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
