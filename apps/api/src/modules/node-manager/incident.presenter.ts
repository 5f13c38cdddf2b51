import type { Incident, IncidentStep } from '@gantry/contracts';
import type { TenantScope } from '../../common/tenant-scope';

interface IncidentRow {
  id: string;
  kind: string;
  severity: string;
  state: string;
  scope: string;
  remediation: string;
  summary: string;
  xid: number | null;
  nodeId: string | null;
  gpuId: string | null;
  jobIds: string[];
  tenantIds: string[];
  timeline: unknown;
  detectedAt: Date;
  mitigatedAt: Date | null;
  resolvedAt: Date | null;
  burnInFailures: number;
}

/**
 * Incidents are cluster facts every tenant may see (the hardware is shared); the jobs they
 * moved are listed only to their own tenant (or the platform admin). jobIds[i] belongs to
 * tenantIds[i] when both were recorded together; otherwise a tenant sees none.
 */
export function presentIncident(
  scope: TenantScope,
  r: IncidentRow,
  targets: { nodes: Map<string, string>; gpus: Map<string, { index: number; health: 'healthy' | 'degraded' | 'unhealthy' }> },
): Incident {
  const gpu = r.gpuId ? targets.gpus.get(r.gpuId) : undefined;
  const aligned = r.jobIds.length === r.tenantIds.length;
  const jobIds = scope.kind === 'platform' ? r.jobIds : aligned ? r.jobIds.filter((_, i) => r.tenantIds[i] === scope.tenantId) : [];
  return {
    id: r.id,
    kind: r.kind,
    severity: r.severity,
    state: r.state as Incident['state'],
    scope: r.scope as Incident['scope'],
    remediation: r.remediation,
    summary: r.summary,
    xid: r.xid,
    nodeId: r.nodeId,
    nodeName: r.nodeId ? (targets.nodes.get(r.nodeId) ?? null) : null,
    gpuId: r.gpuId,
    gpuIndex: gpu?.index ?? null,
    gpuHealth: gpu?.health ?? null,
    jobIds,
    jobsAffected: r.jobIds.length,
    timeline: (Array.isArray(r.timeline) ? (r.timeline as IncidentStep[]) : []).map((s) => ({
      at: s.at,
      step: s.step,
      message: s.message,
      ...(s.findings ? { findings: s.findings.map((f) => ({ gpuIndex: f.gpuIndex, result: f.result, detail: f.detail })) } : {}),
      ...(s.durationSeconds !== undefined ? { durationSeconds: s.durationSeconds } : {}),
    })),
    detectedAt: r.detectedAt.toISOString(),
    mitigatedAt: r.mitigatedAt?.toISOString() ?? null,
    resolvedAt: r.resolvedAt?.toISOString() ?? null,
    mttrSeconds: r.resolvedAt ? Math.round((r.resolvedAt.getTime() - r.detectedAt.getTime()) / 100) / 10 : null,
    burnInFailures: r.burnInFailures,
  };
}
