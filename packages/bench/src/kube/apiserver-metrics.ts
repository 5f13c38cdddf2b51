/** The kube-apiserver's own request counter (`apiserver_request_total`), summed over every label. */
import { kubeText, type KubeEndpoint } from './kube-http';

export function sumRequestTotal(metricsText: string): number {
  let total = 0;
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) total += value;
  }
  return total;
}

export async function apiserverRequestTotal(api: KubeEndpoint): Promise<number> {
  return sumRequestTotal(await kubeText(api, '/metrics'));
}
