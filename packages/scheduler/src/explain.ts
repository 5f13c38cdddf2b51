/**
 * Explanations: why a job did not fit, aggregated over the node classes of its shape board
 * ("needs 0.5 GPU: 0 of 1,213 nodes fit (1,180 nodes: not enough free GPU share; 33 nodes: GPU
 * model not allowed)").
 */
import type { NodeClassIndex } from './node-classes';
import { describeRequest, formatCount } from './reasons';
import type { PendingJob, Reason, Status } from './types';

/**
 * Aggregated, readable reasons. Every live class must already be evaluated on the job's board
 * (`shapeId`); `statuses` are the interned filter statuses, `topology` the gang's own reason.
 */
export function explainUnschedulable(
  index: NodeClassIndex,
  shapeId: number,
  statuses: readonly Status[],
  nodeCount: number,
  job: PendingJob,
  topology: Reason | null,
): Status {
  const board = index.board(shapeId);
  const counts = new Float64Array(statuses.length);
  let fitting = 0;
  for (let i = 0; i < index.liveCount; i++) {
    const id = index.liveIds[i]!;
    const st = board.state[id]!;
    if (st === 1) fitting += index.classSize[id]!;
    else counts[st - 2]! += index.classSize[id]!;
  }
  const byCode = new Map<string, { count: number; message: string }>();
  for (let k = 0; k < statuses.length; k++) {
    if (!counts[k]) continue;
    const r = statuses[k]!.reasons[0] ?? { code: 'unschedulable', message: 'does not fit' };
    const agg = byCode.get(r.code);
    if (agg) agg.count += counts[k]!;
    else byCode.set(r.code, { count: counts[k]!, message: r.message });
  }
  const parts = [...byCode.entries()].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1));
  const detail = parts.map(([, v]) => `${formatCount(v.count)} node${v.count === 1 ? '' : 's'}: ${v.message}`).join('; ');
  const head = topology
    ? topology
    : {
        code: 'insufficient_resources',
        message: `needs ${job.replicas > 1 ? `${job.replicas} x ` : ''}${describeRequest(job.request)}: ${formatCount(fitting)} of ${formatCount(nodeCount)} nodes fit${detail ? ` (${detail})` : ''}`,
      };
  const reasons: Reason[] = [head];
  for (const [code, v] of parts) reasons.push({ code, message: `${formatCount(v.count)} node${v.count === 1 ? '' : 's'}: ${v.message}` });
  return { code: 'unschedulable', reasons };
}
