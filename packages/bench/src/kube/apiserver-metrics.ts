/**
 * The kube-apiserver's own counters from /metrics: requests (`apiserver_request_total`), by verb
 * and resource, everyone's; and its requests to etcd (`etcd_request_duration_seconds_count`), by
 * operation and object type: what each placement costs the API server and etcd, whoever asked.
 */
import { kubeText, type KubeEndpoint } from './kube-http';

export type Counts = Record<string, number>;

/** `name{a="x",b="y"} 12` -> labels and value; undefined for other metrics, comments, blank lines. */
function sample(line: string, metric: string): { labels: Record<string, string>; value: number } | undefined {
  if (!line.startsWith(`${metric}{`)) return undefined;
  const close = line.lastIndexOf('}');
  const value = Number(line.slice(close + 1).trim());
  if (!Number.isFinite(value)) return undefined;
  const labels: Record<string, string> = {};
  for (const m of line.slice(metric.length + 1, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
  return { labels, value };
}

/** A counter's samples summed by a key made from their labels. */
export function countsBy(metricsText: string, metric: string, keyOf: (labels: Record<string, string>) => string): Counts {
  const counts: Counts = {};
  for (const line of metricsText.split('\n')) {
    const s = sample(line, metric);
    if (!s) continue;
    const key = keyOf(s.labels);
    counts[key] = (counts[key] ?? 0) + s.value;
  }
  return counts;
}

/** `apiserver_request_total` by `VERB resource[/subresource]` (the API server's verbs: LIST, WATCH, POST, PUT, PATCH...). */
export const requestsByKind = (metricsText: string): Counts =>
  countsBy(metricsText, 'apiserver_request_total', (l) => `${l.verb} ${l.resource || '-'}${l.subresource ? `/${l.subresource}` : ''}`);

/** The API server's etcd requests by `operation type` (e.g. `update *coordination.Lease`, `create *core.Pod`). */
export const etcdRequestsByKind = (metricsText: string): Counts =>
  countsBy(metricsText, 'etcd_request_duration_seconds_count', (l) => `${l.operation} ${l.type}`);

export const total = (counts: Counts): number => Object.values(counts).reduce((s, n) => s + n, 0);

/** The kubelets' heartbeat traffic: Lease renewals and node status (`requestsByKind` keys). */
export const isHeartbeat = (kind: string): boolean => / (leases|nodes\/status)$/.test(kind);

export const heartbeats = (counts: Counts): number => total(Object.fromEntries(Object.entries(counts).filter(([k]) => isHeartbeat(k))));

/** Every label summed: the API server's requests so far. */
export const sumRequestTotal = (metricsText: string): number => total(requestsByKind(metricsText));

/** `after - before`, keys that did not change left out, largest first. */
export function countsDelta(before: Counts, after: Counts): Counts {
  return Object.fromEntries(
    Object.entries(after)
      .map(([k, n]) => [k, n - (before[k] ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]),
  );
}

/** Counts divided by `per` (rounded to 0.01), the ones that round to 0 left out. */
export function perUnit(counts: Counts, per: number): Counts {
  return Object.fromEntries(
    Object.entries(counts)
      .map(([k, n]) => [k, Math.round((n * 100) / Math.max(1, per)) / 100] as const)
      .filter(([, n]) => n > 0),
  );
}

export interface ApiserverCounters {
  requests: Counts;
  etcd: Counts;
}

export async function apiserverCounters(api: KubeEndpoint): Promise<ApiserverCounters> {
  const text = await kubeText(api, '/metrics');
  return { requests: requestsByKind(text), etcd: etcdRequestsByKind(text) };
}
