import { sumRequestTotal } from './apiserver-metrics';
import { requestKey } from './counting-proxy';
import { benchTopology } from './kube-bench';

describe('the Kubernetes benchmark', () => {
  it('names each driver request by verb and resource as the API server does', () => {
    expect(requestKey('GET', '/api/v1/namespaces/gantry/pods?labelSelector=gantry.io%2Fjob-id%3Dx')).toBe('LIST pods');
    expect(requestKey('GET', '/api/v1/namespaces/gantry/pods?watch=1&resourceVersion=5')).toBe('WATCH pods');
    expect(requestKey('GET', '/api/v1/nodes/h100-s0-l0-n0')).toBe('GET nodes');
    expect(requestKey('POST', '/api/v1/namespaces/gantry/pods')).toBe('CREATE pods');
    expect(requestKey('DELETE', '/api/v1/namespaces/gantry/pods/gantry-x-r0')).toBe('DELETE pods');
    expect(requestKey('POST', '/api/v1/namespaces/team/pods/p/eviction')).toBe('CREATE pods/eviction');
    expect(requestKey('PATCH', '/api/v1/nodes/n1')).toBe('PATCH nodes');
    expect(requestKey('PUT', '/api/v1/namespaces/gpu-operator/configmaps/gantry-mig-parted-config')).toBe('UPDATE configmaps');
    expect(requestKey('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases')).toBe('LIST leases');
    expect(requestKey('GET', '/api/v1')).toBe('LIST /api/v1');
  });

  it('adds up apiserver_request_total over every label and nothing else', () => {
    const text = [
      '# HELP apiserver_request_total [STABLE] Counter of apiserver requests',
      '# TYPE apiserver_request_total counter',
      'apiserver_request_total{code="201",component="apiserver",resource="pods",verb="POST",version="v1"} 2000',
      'apiserver_request_total{code="200",component="apiserver",resource="nodes",verb="LIST",version="v1"} 3',
      'apiserver_request_total{code="200",component="apiserver",resource="pods",subresource="status",verb="PATCH",version="v1"} 4.5e+03',
      'apiserver_request_duration_seconds_count{resource="pods",verb="POST"} 2000',
    ].join('\n');
    expect(sumRequestTotal(text)).toBe(6503);
  });

  it('lays out 1,000 nodes as 5 spines x 10 leaves x 20 nodes of 8 GPUs, and small clusters in one spine', () => {
    const t = benchTopology(1000);
    expect(t.spines).toHaveLength(5);
    expect(t.spines.every((s) => s.leaves.length === 10 && s.leaves.every((l) => l.nodes.length === 20 && l.nodes.every((n) => n.gpus.length === 8)))).toBe(
      true,
    );
    const small = benchTopology(40);
    expect(small.spines).toHaveLength(1);
    expect(small.spines[0]!.leaves.map((l) => l.nodes.length)).toEqual([20, 20]);
  });
});
