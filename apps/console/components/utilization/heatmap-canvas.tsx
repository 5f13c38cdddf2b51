'use client';

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { GpuHeatmap } from '@gantry/contracts';
import './utilization.css';

export type HeatmapMetric = 'sm' | 'memory' | 'power' | 'allocated';

export const HEATMAP_METRICS: Record<HeatmapMetric, { label: string; unit: string }> = {
  sm: { label: 'SM activity', unit: '%' },
  memory: { label: 'Memory used', unit: '%' },
  power: { label: 'Power (of 700 W)', unit: 'W' },
  allocated: { label: 'Allocated', unit: '%' },
};

const MAX_POWER_W = 700;
const NO_SAMPLE = '#d5dae3';
const UNHEALTHY = '#d0342c';

/** 0..1 -> a sequential blue scale (light = idle, dark = busy); 256 precomputed steps. */
const PALETTE = Array.from({ length: 256 }, (_, i) => {
  const t = i / 255;
  const stops = [
    [238, 242, 247],
    [159, 196, 255],
    [47, 111, 237],
    [12, 42, 110],
  ];
  const x = t * (stops.length - 1);
  const k = Math.min(stops.length - 2, Math.floor(x));
  const f = x - k;
  const c = stops[k]!.map((v, j) => Math.round(v + (stops[k + 1]![j]! - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
});

export function heatColor(v: number): string {
  return PALETTE[Math.max(0, Math.min(255, Math.round(v * 255)))]!;
}

/** The value (0..1) of GPU i for a metric, or null when it sent no sample. */
export function metricValue(d: GpuHeatmap, i: number, metric: HeatmapMetric): number | null {
  switch (metric) {
    case 'sm':
      return d.gpus.smPct[i] == null ? null : d.gpus.smPct[i]! / 100;
    case 'memory':
      return d.gpus.memoryPct[i] == null ? null : d.gpus.memoryPct[i]! / 100;
    case 'power':
      return d.gpus.powerW[i] == null ? null : Math.min(1, d.gpus.powerW[i]! / MAX_POWER_W);
    case 'allocated':
      return d.gpus.allocated[i]!;
  }
}

interface Layout {
  cell: number;
  gap: number;
  nodeGap: number;
  perNode: number;
  cols: number;
  rows: number;
  blockW: number;
  rowH: number;
  width: number;
  height: number;
  /** First GPU (array position) of each node. */
  nodeStart: number[];
  nodeCount: number[];
}

function layout(d: GpuHeatmap, width: number): Layout {
  const nodes = d.nodes.length;
  const nodeStart = new Array<number>(nodes).fill(-1);
  const nodeCount = new Array<number>(nodes).fill(0);
  for (let i = 0; i < d.gpus.node.length; i++) {
    const n = d.gpus.node[i]!;
    if (nodeStart[n] === -1) nodeStart[n] = i;
    nodeCount[n]!++;
  }
  const perNode = Math.max(1, ...nodeCount);
  const cell = nodes <= 64 ? 16 : nodes <= 256 ? 10 : 7;
  const gap = 1;
  const nodeGap = nodes <= 64 ? 8 : 4;
  const blockW = perNode * (cell + gap) - gap;
  const cols = Math.max(1, Math.floor((width + nodeGap) / (blockW + nodeGap)));
  const rows = Math.ceil(nodes / cols);
  const rowH = cell + (nodes <= 64 ? 8 : 3);
  return { cell, gap, nodeGap, perNode, cols, rows, blockW, rowH, width, height: Math.max(rowH, rows * rowH), nodeStart, nodeCount };
}

export interface HoveredGpu {
  i: number;
  x: number;
  y: number;
}

/**
 * Every GPU of the cluster as one cell on a canvas: one block per node (its GPUs side by side),
 * blocks in rows. Drawing 8,000 cells is a few milliseconds; hover and click find the cell
 * by arithmetic, so the page stays smooth at 1,000 nodes x 8 GPUs.
 */
export function HeatmapCanvas({ data, metric, onOpenNode }: { data: GpuHeatmap; metric: HeatmapMetric; onOpenNode?: (nodeName: string) => void }) {
  const wrap = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);
  const [hover, setHover] = useState<HoveredGpu | null>(null);
  const [renderMs, setRenderMs] = useState<number | null>(null);

  useEffect(() => {
    const el = wrap.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const lay = useMemo(() => (width > 0 ? layout(data, width) : null), [data, width]);

  useEffect(() => {
    const c = canvas.current;
    if (!c || !lay) return;
    const t0 = performance.now();
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(lay.width * dpr);
    c.height = Math.round(lay.height * dpr);
    c.style.width = `${lay.width}px`;
    c.style.height = `${lay.height}px`;
    const ctx = c.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, lay.width, lay.height);
    for (let n = 0; n < data.nodes.length; n++) {
      const col = n % lay.cols;
      const row = Math.floor(n / lay.cols);
      const x0 = col * (lay.blockW + lay.nodeGap);
      const y0 = row * lay.rowH;
      const start = lay.nodeStart[n]!;
      for (let k = 0; k < lay.nodeCount[n]!; k++) {
        const i = start + k;
        const v = metricValue(data, i, metric);
        ctx.fillStyle = data.gpus.health[i] === 2 ? UNHEALTHY : v === null ? NO_SAMPLE : heatColor(v);
        ctx.fillRect(x0 + k * (lay.cell + lay.gap), y0, lay.cell, lay.cell);
      }
    }
    setRenderMs(Math.round((performance.now() - t0) * 10) / 10);
  }, [data, lay, metric]);

  const gpuAt = useCallback(
    (x: number, y: number): number | null => {
      if (!lay) return null;
      const row = Math.floor(y / lay.rowH);
      const col = Math.floor(x / (lay.blockW + lay.nodeGap));
      if (col >= lay.cols || y - row * lay.rowH > lay.cell) return null;
      const n = row * lay.cols + col;
      if (n >= data.nodes.length) return null;
      const k = Math.floor((x - col * (lay.blockW + lay.nodeGap)) / (lay.cell + lay.gap));
      if (k < 0 || k >= lay.nodeCount[n]!) return null;
      return lay.nodeStart[n]! + k;
    },
    [lay, data.nodes.length],
  );

  const pos = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };

  const sampled = useMemo(() => data.gpus.smPct.filter((s) => s !== null).length, [data]);

  return (
    <div className="heatmap-wrap" ref={wrap}>
      <canvas
        ref={canvas}
        className="heatmap-canvas"
        data-testid="heatmap-canvas"
        data-gpu-count={data.gpus.id.length}
        data-node-count={data.nodes.length}
        data-sampled-count={sampled}
        data-metric={metric}
        data-render-ms={renderMs ?? undefined}
        role="img"
        aria-label={`${HEATMAP_METRICS[metric].label} of ${data.gpus.id.length} GPUs on ${data.nodes.length} nodes`}
        onMouseMove={(e) => {
          const p = pos(e);
          const i = gpuAt(p.x, p.y);
          setHover(i === null ? null : { i, ...p });
        }}
        onMouseLeave={() => setHover(null)}
        onClick={(e) => {
          const p = pos(e);
          const i = gpuAt(p.x, p.y);
          if (i !== null) onOpenNode?.(data.nodes[data.gpus.node[i]!]!);
        }}
        style={{ cursor: hover ? 'pointer' : 'default' }}
      />
      {hover && <Tooltip data={data} h={hover} />}
    </div>
  );
}

function Tooltip({ data, h }: { data: GpuHeatmap; h: HoveredGpu }) {
  const g = data.gpus;
  const i = h.i;
  return (
    <div className="heatmap-tooltip" data-testid="heatmap-tooltip" style={{ left: h.x + 14, top: h.y + 14 }}>
      <div className="strong">
        {data.nodes[g.node[i]!]} · GPU {g.index[i]}
      </div>
      <div className="muted">{data.models[g.model[i]!]}</div>
      <div>SM {g.smPct[i] == null ? '–' : `${g.smPct[i]!.toFixed(0)} %`}</div>
      <div>Memory {g.memoryPct[i] == null ? '–' : `${g.memoryPct[i]!.toFixed(0)} %`}</div>
      <div>Power {g.powerW[i] == null ? '–' : `${g.powerW[i]!.toFixed(0)} W`}</div>
      <div>Allocated {Math.round(g.allocated[i]! * 100)} %</div>
      {g.health[i] !== 0 && <div className="text-bad">{g.health[i] === 2 ? 'unhealthy' : 'degraded'}</div>}
    </div>
  );
}

export function HeatmapLegend({ metric }: { metric: HeatmapMetric }) {
  return (
    <div className="heatmap-legend" data-testid="heatmap-legend">
      <span className="muted">{HEATMAP_METRICS[metric].label}</span>
      <span>0</span>
      <span
        className="heatmap-ramp"
        style={{ background: `linear-gradient(90deg, ${heatColor(0)}, ${heatColor(0.33)}, ${heatColor(0.66)}, ${heatColor(1)})` }}
      />
      <span>{metric === 'power' ? `${MAX_POWER_W} W` : '100 %'}</span>
      <i className="heatmap-swatch" style={{ background: NO_SAMPLE }} /> <span className="muted">no sample</span>
      <i className="heatmap-swatch" style={{ background: UNHEALTHY }} /> <span className="muted">unhealthy</span>
    </div>
  );
}
