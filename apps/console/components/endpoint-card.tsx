'use client';

import Link from 'next/link';
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Endpoint, EndpointInvokeResult } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { endpointDetailQuery, endpointKeys, invokeEndpoint, scaleEndpoint, updateEndpoint } from '@/lib/queries/endpoints';
import { useClient } from '@/lib/session';
import { Sparkline } from './sparkline';

const fmtMs = (ms: number | null) => (ms === null ? '—' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

function resourcesText(e: Endpoint): string {
  const r = e.resources;
  const what = r.gpus !== undefined ? `${r.gpus} x GPU` : r.migProfile ? r.migProfile : `${r.gpuFraction} GPU`;
  return r.gpuModel ? `${what} · ${r.gpuModel}` : what;
}

/** One endpoint: replicas, traffic sparkline, scale slider, scale-to-zero setting, cold starts, a test request. */
export function EndpointCard({ endpoint }: { endpoint: Endpoint }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const detail = useQuery(endpointDetailQuery(client, endpoint.id));
  const e = detail.data ?? endpoint;
  const refresh = () => queryClient.invalidateQueries({ queryKey: endpointKeys.all });

  const [replicas, setReplicas] = useState(e.desiredReplicas);
  const [touched, setTouched] = useState(false);
  useEffect(() => {
    if (!touched) setReplicas(e.desiredReplicas);
  }, [e.desiredReplicas, touched]);
  const [idle, setIdle] = useState(String(e.scaleToZeroAfterSeconds));
  useEffect(() => setIdle(String(e.scaleToZeroAfterSeconds)), [e.scaleToZeroAfterSeconds]);

  const scale = useMutation({
    mutationFn: (n: number) => scaleEndpoint(client, e.id, n),
    onSuccess: () => setTouched(false),
    onSettled: refresh,
  });
  const update = useMutation({
    mutationFn: (body: { minReplicas?: number; scaleToZeroAfterSeconds?: number }) => updateEndpoint(client, e.id, body),
    onSettled: refresh,
  });
  const [invokeStarted, setInvokeStarted] = useState<number | null>(null);
  const invoke = useMutation({
    mutationFn: () => invokeEndpoint(client, e.id, 'hello from the console'),
    onMutate: () => setInvokeStarted(Date.now()),
    onSettled: () => {
      setInvokeStarted(null);
      void refresh();
    },
  });

  const traffic = detail.data?.traffic ?? [];
  const rpsNow = traffic.length ? traffic[traffic.length - 1]!.rps : 0;
  // What the operator chose shows at once; the server's value takes over when it changes.
  const [scaleToZero, setScaleToZero] = useState(e.minReplicas === 0);
  useEffect(() => setScaleToZero(e.minReplicas === 0), [e.minReplicas]);
  const total = e.replicas.ready + e.replicas.starting;

  return (
    <div className="card endpoint-card" data-testid="endpoint-card" data-endpoint-id={e.id} data-endpoint-name={e.name} data-state={e.state}>
      <div className="card-head">
        <div>
          <div className="card-title" data-testid="endpoint-name">
            <Link href={`/endpoints/${e.id}`} className="strong-link" data-testid="endpoint-link">
              {e.name}
            </Link>
          </div>
          <div className="muted small">
            {e.model} · {resourcesText(e)}
          </div>
        </div>
        <span className={`badge endpoint-state-${e.state}`} data-testid="endpoint-state" data-state={e.state}>
          {e.state}
        </span>
      </div>

      <div className="endpoint-body">
        <div className="endpoint-figures">
          <div className="endpoint-figure">
            <div className="kpi-value" data-testid="endpoint-replicas" data-ready={e.replicas.ready} data-desired={e.desiredReplicas}>
              {e.replicas.ready}
              <span className="muted"> / {e.desiredReplicas}</span>
            </div>
            <div className="kpi-label">
              replicas ready{e.replicas.starting ? ` · ${e.replicas.starting} loading` : ''}
              {e.warmPool ? ` · ${e.replicas.warm}/${e.warmPool} warm` : ''}
            </div>
          </div>
          <div className="endpoint-figure">
            <div className="kpi-value" data-testid="endpoint-cold-p50">
              {fmtMs(e.coldStarts.p50Ms)}
            </div>
            <div className="kpi-label">cold start p50</div>
          </div>
          <div className="endpoint-figure">
            <div className="kpi-value" data-testid="endpoint-cold-p95">
              {fmtMs(e.coldStarts.p95Ms)}
            </div>
            <div className="kpi-label">
              p95 · <span data-testid="endpoint-cold-count">{e.coldStarts.count}</span> cold starts
            </div>
          </div>
        </div>

        <div className="endpoint-traffic">
          <Sparkline testId="endpoint-sparkline" points={traffic.map((p) => ({ t: p.t, v: p.rps }))} />
          <div className="muted small">
            <span data-testid="endpoint-rps">{Math.round(rpsNow)}</span> req/s now · last 60 s
            {detail.data?.autoscaler?.panic ? (
              <span className="pill pill-warn" data-testid="endpoint-panic">
                {' '}
                panic
              </span>
            ) : null}
          </div>
          {detail.data?.autoscaler && (
            <div className="muted small" data-testid="endpoint-autoscaler-reason">
              {detail.data.autoscaler.reason}
            </div>
          )}
          {detail.data?.reasons.map((r) => (
            <div key={r.code} className="muted small" data-testid="endpoint-reason">
              {r.message}
            </div>
          ))}
        </div>

        <div className="endpoint-controls">
          <label className="endpoint-control">
            <span>
              Scale to <strong data-testid="endpoint-scale-value">{replicas}</strong> of {e.maxReplicas}
            </span>
            <input
              type="range"
              min={e.minReplicas}
              max={e.maxReplicas}
              value={replicas}
              data-testid="endpoint-scale-slider"
              aria-label="Replicas"
              onChange={(ev) => {
                setTouched(true);
                setReplicas(Number(ev.target.value));
              }}
            />
            <button
              type="button"
              className="btn btn-sm btn-primary"
              data-testid="endpoint-scale-apply"
              disabled={scale.isPending || !touched}
              onClick={() => scale.mutate(replicas)}
            >
              {scale.isPending ? 'Scaling…' : 'Apply'}
            </button>
          </label>
          {scale.isError && (
            <div className="alert alert-error small" data-testid="endpoint-scale-error">
              {describeError(scale.error)}
            </div>
          )}
          <label className="endpoint-control">
            <input
              type="checkbox"
              checked={scaleToZero}
              data-testid="endpoint-scale-to-zero"
              disabled={update.isPending}
              onChange={(ev) => {
                setScaleToZero(ev.target.checked);
                update.mutate({ minReplicas: ev.target.checked ? 0 : Math.max(1, e.minReplicas) }, { onError: () => setScaleToZero(e.minReplicas === 0) });
              }}
            />
            <span>Scale to zero after</span>
            <input
              type="number"
              className="input-sm endpoint-idle"
              min={1}
              max={86400}
              value={idle}
              disabled={!scaleToZero}
              data-testid="endpoint-idle-seconds"
              aria-label="Idle seconds before scaling to zero"
              onChange={(ev) => setIdle(ev.target.value)}
            />
            <span>s idle</span>
            <button
              type="button"
              className="btn btn-sm btn-outline"
              data-testid="endpoint-idle-save"
              disabled={!scaleToZero || update.isPending || Number(idle) === e.scaleToZeroAfterSeconds}
              onClick={() => update.mutate({ scaleToZeroAfterSeconds: Number(idle) })}
            >
              Save
            </button>
          </label>
          {update.isError && (
            <div className="alert alert-error small" data-testid="endpoint-update-error">
              {describeError(update.error)}
            </div>
          )}
          <div className="endpoint-control">
            <button type="button" className="btn btn-sm btn-outline" data-testid="endpoint-invoke" disabled={invoke.isPending} onClick={() => invoke.mutate()}>
              {invoke.isPending ? (total === 0 ? 'Cold start: holding the request…' : 'Waiting…') : 'Send a test request'}
            </button>
            {invoke.isPending && invokeStarted !== null && <Elapsed since={invokeStarted} />}
            {invoke.data && <InvokeResult r={invoke.data} />}
            {invoke.isError && (
              <span className="alert alert-error small" data-testid="endpoint-invoke-error">
                {describeError(invoke.error)}
              </span>
            )}
          </div>
        </div>
      </div>
    </div>
  );
}

function Elapsed({ since }: { since: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 100);
    return () => clearInterval(t);
  }, []);
  return (
    <span className="muted small" data-testid="endpoint-invoke-elapsed">
      {((now - since) / 1000).toFixed(1)} s
    </span>
  );
}

function InvokeResult({ r }: { r: EndpointInvokeResult }) {
  return (
    <span className="muted small" data-testid="endpoint-invoke-result" data-cold-start={r.coldStart}>
      replica {r.replica} answered{r.coldStart ? ` after a ${fmtMs(r.waitedMs)} cold start` : ' at once'}
    </span>
  );
}
