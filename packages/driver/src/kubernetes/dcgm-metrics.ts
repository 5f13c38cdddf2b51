/**
 * GPU telemetry from NVIDIA dcgm-exporter's Prometheus text (`/metrics`, or a Prometheus
 * federation of them): SM utilisation, framebuffer used and power per GPU, keyed by the
 * `Hostname` (node) and `gpu` (index) labels. Pure function.
 */
import type { GpuMetricSample } from '../types';

const FIELDS = {
  DCGM_FI_DEV_GPU_UTIL: 'smPct',
  DCGM_FI_DEV_FB_USED: 'memoryUsedMiB',
  DCGM_FI_DEV_POWER_USAGE: 'powerW',
} as const;

type Field = (typeof FIELDS)[keyof typeof FIELDS];

const SAMPLE_LINE = /^(\w+)\{([^}]*)\}\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

export function parseDcgmMetrics(text: string, at: number): GpuMetricSample[] {
  const samples = new Map<string, GpuMetricSample>();
  for (const line of text.split('\n')) {
    const match = SAMPLE_LINE.exec(line);
    if (!match || !(match[1] in FIELDS)) continue;
    const labels = Object.fromEntries([...match[2].matchAll(LABEL)].map((m) => [m[1], m[2]]));
    const gpuIndex = Number.parseInt(labels.gpu ?? '', 10);
    const nodeName = labels.Hostname ?? labels.kubernetes_node;
    const value = Number(match[3]);
    if (!nodeName || Number.isNaN(gpuIndex) || Number.isNaN(value)) continue;
    const key = `${nodeName}/${gpuIndex}`;
    const sample = samples.get(key) ?? { nodeName, gpuIndex, at, smPct: 0, memoryUsedMiB: 0, powerW: 0 };
    sample[FIELDS[match[1] as keyof typeof FIELDS] as Field] = value;
    samples.set(key, sample);
  }
  return [...samples.values()];
}
