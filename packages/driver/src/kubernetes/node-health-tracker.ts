/**
 * Node health over time: turns each change of a GPU node (a watch delta) into the driver events
 * the failover loop consumes, `node-down`/`node-up` (Ready condition, lifecycle taints, or the
 * Node deleted), `nic-down`/`nic-up` and `xid` (health conditions, health-signals.ts). The state
 * the driver starts from is learnt silently; after that only transitions are reported, once
 * each, whether they arrive through the watch or through a relist after a reconnect.
 */
import type { DriverEvent } from '../types';
import { nodeHealthOf, type NodeHealth, type NodeLike } from './health-signals';
import type { Delta } from './informer';

export class NodeHealthTracker {
  private readonly known = new Map<string, NodeHealth>();
  private readonly deleted = new Set<string>();

  /** The events a node delta means, in order. `now` is the event time (ms). */
  onNode(delta: Delta<NodeLike>, now: number): DriverEvent[] {
    const nodeName = delta.object.metadata?.name;
    if (!nodeName) return [];
    const before = this.known.get(nodeName);
    if (delta.type === 'DELETED') {
      this.known.delete(nodeName);
      this.deleted.add(nodeName);
      // A Node deleted under Gantry is a lost node (unless it was already reported down).
      return before && before.ready ? [{ type: 'node-down', nodeName, at: now }] : [];
    }
    const after = nodeHealthOf(delta.object);
    this.known.set(nodeName, after);
    if (!before) {
      // A node seen for the first time is the baseline; one that comes back after a deletion is up again.
      const returned = this.deleted.delete(nodeName) && !delta.initial;
      return returned && after.ready ? [{ type: 'node-up', nodeName, at: now }] : [];
    }
    return transitions(nodeName, before, after, now);
  }

  health(nodeName: string): NodeHealth | undefined {
    return this.known.get(nodeName);
  }
}

function transitions(nodeName: string, before: NodeHealth, after: NodeHealth, at: number): DriverEvent[] {
  const events: DriverEvent[] = [];
  if (before.ready !== after.ready) events.push({ type: after.ready ? 'node-up' : 'node-down', nodeName, at });
  if (before.networkUp !== after.networkUp) events.push({ type: after.networkUp ? 'nic-up' : 'nic-down', nodeName, at });
  const held = new Set(before.xids.map((x) => `${x.gpuIndex}:${x.xid}`));
  for (const x of after.xids) {
    if (!held.has(`${x.gpuIndex}:${x.xid}`)) events.push({ type: 'xid', nodeName, gpuIndex: x.gpuIndex, xid: x.xid, at });
  }
  return events;
}
