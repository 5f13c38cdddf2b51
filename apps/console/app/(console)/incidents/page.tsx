'use client';

import { useState } from 'react';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { INCIDENT_STATES, type Incident } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Pill } from '@/components/state-badge';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { age } from '@/lib/format';
import { incidentsListQuery } from '@/lib/queries/incidents';
import { isOperator, meQuery } from '@/lib/queries/me';
import { IntegrityPanel } from '@/components/integrity-panel';
import { IncidentAnswer } from '@/components/incident-answer';
import { useClient } from '@/lib/session';
import { useNow } from '@/lib/use-now';

const STATE_TONE: Record<Incident['state'], string> = {
  open: 'bad',
  mitigated: 'warn',
  remediating: 'info',
  'burn-in': 'info',
  'needs-attention': 'bad',
  resolved: 'ok',
  failed: 'bad',
};
const SEVERITY_TONE: Record<string, string> = { low: 'info', medium: 'warn', high: 'bad', critical: 'bad' };

const formatSeconds = (s: number) =>
  s < 60 ? `${s.toFixed(1)} s` : s < 3600 ? `${Math.floor(s / 60)} min ${Math.round(s % 60)} s` : `${(s / 3600).toFixed(1)} h`;

/** Faults from detection to recovery: what happened, what the loop did, and how long it took (MTTR). */
export default function IncidentsPage() {
  const client = useClient();
  const [state, setState] = useState('');
  const incidents = useQuery(incidentsListQuery(client, state || undefined));
  const me = useQuery(meQuery(client));
  const operator = isOperator(me.data);
  const items = incidents.data?.items ?? [];
  const resolved = items.filter((i) => i.mttrSeconds !== null);
  const mttr = resolved.length ? resolved.reduce((s, i) => s + i.mttrSeconds!, 0) / resolved.length : null;
  const open = items.filter((i) => !i.resolvedAt).length;
  return (
    <>
      <PageHeader
        title="Incidents"
        subtitle={
          incidents.data ? (
            <span data-testid="incidents-summary">
              {items.length} incident(s) · {open} open{mttr !== null ? ` · mean MTTR ${formatSeconds(mttr)}` : ''}
            </span>
          ) : (
            'GPU and node faults, the actions taken and the time to recover'
          )
        }
        actions={
          <select className="select-sm" value={state} onChange={(e) => setState(e.target.value)} data-testid="incidents-state-filter" aria-label="State">
            <option value="">All states</option>
            {INCIDENT_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        }
      />
      {operator && (
        <section className="section">
          <IntegrityPanel />
        </section>
      )}
      <section className="section">
        {incidents.isError && !incidents.data ? (
          <ErrorPanel error={incidents.error} onRetry={() => void incidents.refetch()} title="Cannot load incidents" />
        ) : !incidents.data ? (
          <Loading />
        ) : items.length === 0 ? (
          <Empty>No incident{state ? ` in state ${state}` : ''}. Faults (Xid errors, NIC or node down) show here with what was done about them.</Empty>
        ) : (
          <div className="incident-list" data-testid="incidents">
            {items.map((i) => (
              <IncidentCard key={i.id} incident={i} operator={operator} />
            ))}
          </div>
        )}
      </section>
    </>
  );
}

function IncidentCard({ incident: i, operator }: { incident: Incident; operator: boolean }) {
  const now = useNow(1000);
  const [open, setOpen] = useState(!i.resolvedAt);
  const running = i.resolvedAt ? null : (now - Date.parse(i.detectedAt)) / 1000;
  const target = (
    <>
      {i.nodeId ? (
        <Link href={`/cluster/nodes/${i.nodeId}`} className="mono">
          {i.nodeName ?? i.nodeId}
        </Link>
      ) : null}
      {i.gpuIndex !== null && <span className="mono"> GPU {i.gpuIndex}</span>}
    </>
  );
  return (
    <div
      className={`card incident incident-${i.state}`}
      data-testid="incident"
      data-incident-id={i.id}
      data-kind={i.kind}
      data-state={i.state}
      data-xid={i.xid ?? ''}
    >
      <div
        className="incident-head"
        onClick={(e) => {
          // the whole head toggles for a mouse; the button is the keyboard's way
          if (!(e.target as HTMLElement).closest('a,button')) setOpen(!open);
        }}
      >
        <span className="incident-title">
          <Pill tone={SEVERITY_TONE[i.severity] ?? 'info'}>{i.severity}</Pill> <strong>{i.kind === 'xid' ? `Xid ${i.xid ?? '?'}` : i.kind}</strong> on {target}
        </span>
        <span className="incident-meta">
          <Pill tone={STATE_TONE[i.state]} testId="incident-state">
            {i.state}
          </Pill>
          <span className="muted small"> detected {age(i.detectedAt, now)} ago · </span>
          <span className="mono small" data-testid="incident-mttr">
            {i.mttrSeconds !== null ? `MTTR ${formatSeconds(i.mttrSeconds)}` : `open for ${formatSeconds(running ?? 0)}`}
          </span>{' '}
          <button type="button" className="btn btn-sm btn-ghost" data-testid="incident-toggle" onClick={() => setOpen(!open)} aria-expanded={open}>
            {open ? 'Hide steps' : 'Show steps'}
          </button>
        </span>
      </div>
      <div className="incident-summary small">
        {i.summary}
        <span className="muted">
          {' '}
          · quarantine: {i.scope === 'none' ? 'none (job restarted only)' : i.scope} · remediation: {i.remediation} · {i.jobsAffected} job(s) moved
          {i.burnInFailures > 0 ? ` · ${i.burnInFailures} failed burn-in(s)` : ''}
        </span>
      </div>
      {i.state === 'needs-attention' && operator && <IncidentAnswer incident={i} />}
      {open && (
        <ol className="timeline" data-testid="incident-timeline">
          {i.timeline.map((s, k) => (
            <li key={k} className={`timeline-step step-${s.step}`} data-testid="incident-step" data-step={s.step}>
              <span className="mono small timeline-at">+{((Date.parse(s.at) - Date.parse(i.detectedAt)) / 1000).toFixed(1)} s</span>
              <span className="timeline-name">{s.step}</span>
              <span className="timeline-msg">
                {s.message}
                {s.findings && s.findings.length > 0 && (
                  <ul className="burn-in-findings" data-testid="burn-in-findings">
                    {s.findings.map((f) => (
                      <li key={f.gpuIndex} className={`finding-${f.result}`} data-result={f.result}>
                        <span className="mono">GPU {f.gpuIndex}</span> <strong>{f.result}</strong> {f.detail}
                      </li>
                    ))}
                  </ul>
                )}
              </span>
            </li>
          ))}
          {i.jobIds.length > 0 && (
            <li className="timeline-step">
              <span className="mono small timeline-at" />
              <span className="timeline-name">jobs</span>
              <span className="timeline-msg">
                {i.jobIds.map((id) => (
                  <Link key={id} href={`/jobs/${id}`} className="mono job-chip">
                    {id.length > 14 ? `${id.slice(0, 12)}…` : id}
                  </Link>
                ))}
              </span>
            </li>
          )}
        </ol>
      )}
    </div>
  );
}
