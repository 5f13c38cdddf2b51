'use client';

import { Area, AreaChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { EndpointDetail } from '@gantry/contracts';

/** Requests per second and in-flight requests of the last minute, one point per second. */
export function EndpointTrafficChart({ traffic }: { traffic: EndpointDetail['traffic'] }) {
  const last = traffic[traffic.length - 1];
  const end = last?.t ?? 0;
  const data = traffic.map((p) => ({ s: p.t - end, rps: p.rps, concurrency: p.concurrency }));
  return (
    <div className="card pad" data-testid="endpoint-traffic" data-points={traffic.length} data-rps={last ? Math.round(last.rps) : 0}>
      <ResponsiveContainer width="100%" height={180}>
        <AreaChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
          <XAxis dataKey="s" unit=" s" tick={{ fontSize: 11 }} />
          <YAxis tick={{ fontSize: 11 }} width={40} allowDecimals={false} />
          <Tooltip />
          <Legend />
          <Area name="requests/s" type="monotone" dataKey="rps" stroke="var(--primary)" fill="var(--primary)" fillOpacity={0.15} isAnimationActive={false} />
          <Area name="in flight" type="monotone" dataKey="concurrency" stroke="#1e8a4c" fill="#1e8a4c" fillOpacity={0.1} isAnimationActive={false} />
        </AreaChart>
      </ResponsiveContainer>
    </div>
  );
}
