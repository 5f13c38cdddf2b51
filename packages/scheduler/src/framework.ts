/**
 * The plugin framework (after kube-scheduler): one small interface per extension point,
 * a registry that refuses duplicate names, and profiles that list which plugins run with
 * which weights. Plugins return statuses (values), never throw.
 *
 * Where things are: the engine's working types in views.ts; the pipeline that runs the plugins
 * in engine.ts; the built-in plugins in plugins/ (one file per family: filters, fragmentation,
 * cpu-strand, fit, topology, reserve-permit); their registry in registry.ts; profiles in
 * profiles.ts.
 */
import type { PendingJob, Reason, ReplicaPlacement, Status, StatusCode } from './types';
import type { DeviceOption, EngineHandle, JobView, NodeView } from './views';

export const SUCCESS: Status = Object.freeze({ code: 'success', reasons: [] }) as Status;

export function status(code: StatusCode, reasonCode?: string, message?: string): Status {
  return { code, reasons: reasonCode ? [{ code: reasonCode, message: message ?? reasonCode }] : [] };
}
export const unschedulable = (code: string, message: string): Status => status('unschedulable', code, message);
export const unresolvable = (code: string, message: string): Status => status('unresolvable', code, message);
export const isSuccess = (s: Status): boolean => s.code === 'success';

/**
 * Per-job cycle state: PreFilter computes once (the interpreted request, for example) and every
 * Filter / Score call reads it. `data` is free for plugins, keyed by plugin name.
 */
export interface CycleState {
  readonly engine: EngineHandle;
  job: JobView;
  /** Device options the capacity filter found on the node being filtered. */
  options: DeviceOption[];
  data: Map<string, unknown>;
}

export interface Plugin {
  readonly name: string;
}
export interface PreFilterPlugin extends Plugin {
  preFilter(state: CycleState, job: PendingJob): Status;
}
/** Filters must depend only on the node's state (not its name or place): the engine caches per distinct node state. */
export interface FilterPlugin extends Plugin {
  filter(state: CycleState, job: JobView, node: NodeView): Status;
}
export interface ScorePlugin extends Plugin {
  /** Higher is better. Must depend only on the node's state and plugin-wide data versioned by `epoch`. */
  score(state: CycleState, job: JobView, node: NodeView, option: DeviceOption): number;
  /** Optional: rescale this plugin's scores across all candidates of a job (in place). */
  normalize?(state: CycleState, job: JobView, scores: Float64Array): void;
  /** Changes when plugin-wide data changes (invalidates cached scores). */
  epoch?(): number;
}
export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, job: JobView, placement: ReplicaPlacement[]): Status;
  unreserve(state: CycleState, job: JobView, placement: ReplicaPlacement[]): void;
}
export interface PermitPlugin extends Plugin {
  permit(state: CycleState, job: JobView, placement: ReplicaPlacement[]): Status;
}

export type AnyPlugin = PreFilterPlugin | FilterPlugin | ScorePlugin | ReservePlugin | PermitPlugin;
export type ExtensionPoint = 'preFilter' | 'filter' | 'score' | 'reserve' | 'permit';

/** Builds a plugin for one engine; `args` come from the profile. */
export type PluginFactory = (engine: EngineHandle, args: Record<string, unknown>) => AnyPlugin;

export interface WeightedPlugin {
  name: string;
  weight: number;
  args?: Record<string, unknown>;
}

export interface Profile {
  name: string;
  preFilter: string[];
  filter: string[];
  score: WeightedPlugin[];
  reserve: string[];
  permit: string[];
  /** Order in which a node's GPUs are offered to a share (ties keep the first): 'index' or 'tightest'. */
  shareOrder: 'index' | 'tightest';
  /**
   * Node comparison granularity: a node's score is its best option's weighted total rounded
   * down to a multiple of this (0 = exact). Inside a node the exact total picks the device;
   * between nodes, differences below the quantum are ties and go to the tie-break order.
   */
  nodeScoreQuantum?: number;
  /**
   * Lexicographic scoring with slack: options and nodes whose first score plugin is within this
   * much of the best count as equally good; among them the other plugins decide, then node order.
   */
  tolerance?: number;
  /**
   * How the engine learns the shape mix under this profile (coverage, refresh schedule);
   * EngineOptions.mix overrides it field by field.
   */
  mix?: { coverage?: number; refreshStep?: number; growth?: number; weighting?: 'count' | 'demand'; minChange?: number };
  /** Arguments per plugin name (for plugins outside `score`). */
  args?: Record<string, Record<string, unknown>>;
}

export class Registry<T> {
  private readonly items = new Map<string, T>();
  constructor(private readonly kind: string) {}
  register(name: string, item: T): Status {
    if (this.items.has(name)) return status('error', 'duplicate_name', `${this.kind} ${name} is already registered`);
    this.items.set(name, item);
    return SUCCESS;
  }
  get(name: string): T | undefined {
    return this.items.get(name);
  }
  names(): string[] {
    return [...this.items.keys()];
  }
}

export type PluginRegistry = Registry<PluginFactory>;
export type ProfileRegistry = Registry<Profile>;

export function hasPoint<P extends ExtensionPoint>(plugin: AnyPlugin, point: P): boolean {
  return typeof (plugin as unknown as Record<string, unknown>)[point] === 'function';
}

export function reasonsOf(s: Status): Reason[] {
  return s.reasons;
}
