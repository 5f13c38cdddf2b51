import { countsDelta, etcdRequestsByKind, heartbeats, perUnit, requestsByKind, sumRequestTotal } from './apiserver-metrics';
import { cpuBetween } from './cpu-accounting';
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

  it('counts requests by verb and resource, and etcd requests by operation and type', () => {
    const before = [
      'apiserver_request_total{code="201",component="apiserver",contentType="application/json",group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1"} 10',
      'apiserver_request_total{code="409",component="apiserver",contentType="application/json",group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1"} 1',
      'apiserver_request_total{code="200",component="apiserver",group="",resource="pods",scope="namespace",subresource="status",verb="PATCH",version="v1"} 5',
      'apiserver_request_total{code="200",component="apiserver",group="coordination.k8s.io",resource="leases",scope="namespace",subresource="",verb="PUT",version="v1"} 100',
      'etcd_request_duration_seconds_count{operation="create",type="*core.Pod"} 11',
      'etcd_request_duration_seconds_count{operation="update",type="*coordination.Lease"} 100',
      'etcd_request_duration_seconds_sum{operation="update",type="*coordination.Lease"} 0.5',
    ].join('\n');
    expect(requestsByKind(before)).toEqual({ 'POST pods': 11, 'PATCH pods/status': 5, 'PUT leases': 100 });
    expect(etcdRequestsByKind(before)).toEqual({ 'create *core.Pod': 11, 'update *coordination.Lease': 100 });
    const after = { 'POST pods': 31, 'PATCH pods/status': 25, 'PUT leases': 100, 'GET nodes': 4 };
    const delta = countsDelta(requestsByKind(before), after);
    expect(delta).toEqual({ 'POST pods': 20, 'PATCH pods/status': 20, 'GET nodes': 4 });
    expect(perUnit(delta, 20)).toEqual({ 'POST pods': 1, 'PATCH pods/status': 1, 'GET nodes': 0.2 });
    expect(heartbeats({ 'PUT leases': 100, 'GET leases': 3, 'PATCH nodes/status': 4, 'PATCH nodes': 7, 'POST pods': 9 })).toBe(107);
  });

  it('adds up CPU by part over the pids each sample found: a pid that appeared in between counts in full', () => {
    const before = {
      postgres: new Map([
        [10, 5],
        [11, 1],
      ]),
      apiserver: new Map([[20, 100]]),
    };
    const after = {
      postgres: new Map([
        [10, 7],
        [12, 0.5],
      ]),
      apiserver: new Map([[20, 103]]),
    };
    const used = cpuBetween(before, after);
    expect(used.postgres).toBeCloseTo(2.5);
    expect(used.apiserver).toBeCloseTo(3);
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
