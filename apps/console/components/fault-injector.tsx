'use client';

import Link from 'next/link';
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { FaultAccepted, FaultRequest, NodeDetail } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { incidentKeys } from '@/lib/queries/incidents';
import { nodeKeys } from '@/lib/queries/nodes';
import { useClient } from '@/lib/session';

type Kind = FaultRequest['kind'];

/** Xids an operator can play (docs/reference/gpu.md section 3): what each means and does. */
export const FAULT_XIDS: { xid: number; label: string }[] = [
  { xid: 79, label: '79 · GPU fallen off the bus (GPU quarantined, its jobs die)' },
  { xid: 48, label: '48 · double-bit ECC error (GPU quarantined, its jobs die)' },
  { xid: 94, label: '94 · contained ECC error (GPU quarantined, its jobs die)' },
  { xid: 95, label: '95 · uncontained ECC error (GPU quarantined, its jobs die)' },
  { xid: 74, label: '74 · NVLink error (GPU quarantined, its jobs die)' },
  { xid: 119, label: '119 · GSP timeout (GPU quarantined, its jobs die)' },
  { xid: 13, label: '13 · graphics engine exception (the application, not the GPU)' },
  { xid: 31, label: '31 · GPU memory page fault (the application, not the GPU)' },
];

const KINDS: { kind: Kind; label: string }[] = [
  { kind: 'xid', label: 'Xid on a GPU' },
  { kind: 'nic-down', label: 'NIC down (node unreachable for gangs)' },
  { kind: 'node-down', label: 'Node down (no heartbeat)' },
  { kind: 'recover', label: 'Recover (hardware healthy again)' },
  { kind: 'latent', label: 'Latent fault on a GPU (only load shows it: burn-in fails)' },
];

/**
 * Operators, on a simulated (or emulated) cluster: inject a fault on this node or one of its
 * GPUs through POST /v1/sim/faults, then watch the incident loop handle it.
 */
export function FaultInjector({ node }: { node: NodeDetail }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const gpus = [...node.gpus].sort((a, b) => a.index - b.index);
  const [kind, setKind] = useState<Kind>('xid');
  const [gpuIndex, setGpuIndex] = useState(gpus[0]?.index ?? 0);
  const [xid, setXid] = useState(79);
  const [recoverGpu, setRecoverGpu] = useState<'all' | number>('all');
  const [confirming, setConfirming] = useState(false);
  const [last, setLast] = useState<FaultAccepted | null>(null);

  const body = (): FaultRequest => {
    if (kind === 'xid') return { nodeId: node.id, kind, gpuIndex, xid };
    if (kind === 'latent') return { nodeId: node.id, kind, gpuIndex };
    if (kind === 'recover' && recoverGpu !== 'all') return { nodeId: node.id, kind, gpuIndex: recoverGpu };
    return { nodeId: node.id, kind };
  };
  const inject = useMutation({
    mutationFn: (b: FaultRequest) => client.sim.fault(b),
    onSuccess: (r) => setLast(r),
    onSettled: () => {
      setConfirming(false);
      void queryClient.invalidateQueries({ queryKey: nodeKeys.all });
      void queryClient.invalidateQueries({ queryKey: incidentKeys.all });
    },
  });
  const what =
    kind === 'xid'
      ? `Xid ${xid} on GPU ${gpuIndex} of ${node.name}`
      : kind === 'latent'
        ? `a latent fault on GPU ${gpuIndex} of ${node.name}`
        : kind === 'recover'
          ? `recover ${recoverGpu === 'all' ? node.name : `GPU ${recoverGpu} of ${node.name}`}`
          : `${kind} on ${node.name}`;

  return (
    <div className="card pad" data-testid="fault-injector">
      <div className="form-grid">
        <label className="field">
          <span className="field-label">Fault</span>
          <select data-testid="fault-kind" value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            {KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        {(kind === 'xid' || kind === 'latent') && (
          <>
            <label className="field">
              <span className="field-label">GPU</span>
              <select data-testid="fault-gpu" value={gpuIndex} onChange={(e) => setGpuIndex(Number(e.target.value))}>
                {gpus.map((g) => (
                  <option key={g.id} value={g.index}>
                    GPU {g.index} ({g.health})
                  </option>
                ))}
              </select>
            </label>
            {kind === 'xid' && (
              <label className="field">
                <span className="field-label">Xid</span>
                <select data-testid="fault-xid" value={xid} onChange={(e) => setXid(Number(e.target.value))}>
                  {FAULT_XIDS.map((x) => (
                    <option key={x.xid} value={x.xid}>
                      {x.label}
                    </option>
                  ))}
                </select>
              </label>
            )}
          </>
        )}
        {kind === 'recover' && (
          <label className="field">
            <span className="field-label">What</span>
            <select
              data-testid="fault-recover-gpu"
              value={String(recoverGpu)}
              onChange={(e) => setRecoverGpu(e.target.value === 'all' ? 'all' : Number(e.target.value))}
            >
              <option value="all">the node and all its GPUs</option>
              {gpus.map((g) => (
                <option key={g.id} value={g.index}>
                  GPU {g.index} ({g.health})
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <div className="node-actions">
        {confirming ? (
          <span className="cancel-wrap" data-testid="fault-confirm">
            <span className="confirm-text">Inject {what}? Jobs on it are moved by the incident loop.</span>
            <button
              type="button"
              className="btn btn-sm btn-danger-outline"
              data-testid="fault-inject-confirm"
              disabled={inject.isPending}
              onClick={() => inject.mutate(body())}
            >
              {inject.isPending ? 'Injecting…' : 'Inject'}
            </button>
            <button type="button" className="btn btn-sm btn-ghost" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </span>
        ) : (
          <button
            type="button"
            className={`btn btn-sm ${kind === 'recover' ? 'btn-outline' : 'btn-danger-outline'}`}
            data-testid="fault-inject"
            onClick={() => {
              setLast(null);
              inject.reset();
              setConfirming(true);
            }}
          >
            {kind === 'recover' ? 'Recover' : 'Inject fault'}
          </button>
        )}
      </div>
      {last && (
        <div className="alert alert-ok small" role="status" data-testid="fault-accepted" data-kind={last.kind}>
          {last.kind === 'recover' ? 'Recovery' : 'Fault'} sent to {last.nodeName}. Follow it on <Link href="/incidents">Incidents</Link>.
        </div>
      )}
      {inject.isError && (
        <div className="alert alert-error small" role="alert" data-testid="fault-error">
          {describeError(inject.error)}
        </div>
      )}
      <p className="muted small">Simulated or emulated clusters only (POST /v1/sim/faults); on real hardware the health monitors report faults.</p>
    </div>
  );
}
