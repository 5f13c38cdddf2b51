/**
 * What the Kubernetes-backed system looks like from the cluster's side, for the kube-api project:
 * reads of the kube-apiserver (with the admin kubeconfig scripts/e2e.sh writes, TLS unverified as
 * that kubeconfig says) and the kube-emulator's control API.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

interface KubeAccess {
  server: string;
  token: string;
}

function access(): KubeAccess {
  const file = process.env.E2E_KUBECONFIG;
  if (!file) throw new Error('E2E_KUBECONFIG is not set: run the kube-api project through GANTRY_E2E_DRIVER=kubernetes scripts/e2e.sh');
  const text = readFileSync(file, 'utf8');
  const server = /server: "?([^"\s}]+)"?/.exec(text)?.[1];
  const token = /token: "?([^"\s}]+)"?/.exec(text)?.[1];
  if (!server || !token) throw new Error(`${file}: no server or token`);
  return { server, token };
}

/** GET a path of the Kubernetes API as cluster-admin; the parsed body. */
export function kubeGet<T>(path: string): Promise<T> {
  const { server, token } = access();
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, server), { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(JSON.parse(body) as T) : reject(new Error(`GET ${path}: ${res.statusCode} ${body.slice(0, 200)}`)),
      );
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: timed out`)));
    req.end();
  });
}

export interface Pod {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: { resources?: { requests?: Record<string, string> } }[] };
  status?: { phase?: string };
}

export interface KubeNode {
  metadata: { name: string; labels: Record<string, string> };
  spec: { unschedulable?: boolean; taints?: { key: string; effect: string }[] };
}

/** Gantry's pods of one job (label gantry.io/job-id), in the workload namespace. */
export async function podsOfJob(jobId: string): Promise<Pod[]> {
  const list = await kubeGet<{ items: Pod[] }>(`/api/v1/namespaces/gantry/pods?labelSelector=${encodeURIComponent(`gantry.io/job-id=${jobId}`)}`);
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

/** Gantry's unfinished pods on one node. */
export async function podsOnNode(nodeName: string): Promise<Pod[]> {
  const list = await kubeGet<{ items: Pod[] }>(`/api/v1/namespaces/gantry/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${nodeName}`)}`);
  return list.items.filter((p) => !p.metadata.deletionTimestamp && (p.status?.phase === 'Running' || p.status?.phase === 'Pending'));
}

export const kubeNode = (name: string) => kubeGet<KubeNode>(`/api/v1/nodes/${encodeURIComponent(name)}`);

export async function kubeGpuNodes(): Promise<KubeNode[]> {
  return (await kubeGet<{ items: KubeNode[] }>('/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue')).items;
}

/** The kube-emulator's control API: POST /v1/faults (the body of Gantry's FaultInjection). */
export async function emulatorFault(fault: {
  nodeName: string;
  kind: 'xid' | 'nic-down' | 'node-down' | 'latent' | 'recover';
  gpuIndex?: number;
  xid?: number;
}): Promise<void> {
  const url = process.env.E2E_KUBE_EMULATOR_URL;
  if (!url) throw new Error('E2E_KUBE_EMULATOR_URL is not set');
  const res = await fetch(`${url}/v1/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fault) });
  if (res.status !== 204) throw new Error(`emulator fault: ${res.status} ${await res.text()}`);
}

/** Events about a node with one reason (all namespaces). */
export async function nodeEvents(nodeName: string, reason: string): Promise<{ type: string; message: string; source?: { component?: string } }[]> {
  const selector = encodeURIComponent(`involvedObject.name=${nodeName},reason=${reason}`);
  return (await kubeGet<{ items: { type: string; message: string; source?: { component?: string } }[] }>(`/api/v1/events?fieldSelector=${selector}`)).items;
}
