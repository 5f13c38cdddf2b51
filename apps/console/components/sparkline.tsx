'use client';

import { Area, AreaChart, YAxis } from 'recharts';

/** A small area chart of a series (oldest first), no axes: requests per second of the last minute. */
export function Sparkline({
  points,
  width = 220,
  height = 40,
  testId,
}: {
  points: { t: number; v: number }[];
  width?: number;
  height?: number;
  testId?: string;
}) {
  const max = Math.max(1, ...points.map((p) => p.v));
  return (
    <div className="sparkline" data-testid={testId} data-points={points.length} data-max={Math.round(max)} style={{ width, height }}>
      <AreaChart width={width} height={height} data={points} margin={{ top: 2, right: 0, bottom: 0, left: 0 }}>
        <YAxis hide domain={[0, max]} />
        <Area
          type="monotone"
          dataKey="v"
          stroke="var(--primary)"
          fill="var(--primary)"
          fillOpacity={0.15}
          strokeWidth={1.5}
          isAnimationActive={false}
          dot={false}
        />
      </AreaChart>
    </div>
  );
}
