/**
 * Node power for replays: the states, draws and power-management rule live in
 * @gantry/scheduler (power.ts), shared with the live node manager; re-exported here for the
 * planner's callers.
 */
export { DEFAULT_POWER, choosePowerDowns, drawW, nodePower, savedW } from '@gantry/scheduler';
export type { NodePower, PowerDownView, PowerOptions, PowerState } from '@gantry/scheduler';
