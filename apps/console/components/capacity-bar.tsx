/** A horizontal bar: allocated (blue), unhealthy (red), free (rest). */
export function CapacityBar({ total, allocated, unhealthy }: { total: number; allocated: number; unhealthy: number }) {
  const pct = (n: number) => (total > 0 ? Math.max(0, Math.min(100, (n / total) * 100)) : 0);
  const a = pct(allocated);
  const u = Math.min(pct(unhealthy), 100 - a);
  return (
    <div className="bar" role="img" aria-label={`${allocated} of ${total} allocated, ${unhealthy} unhealthy`}>
      <span className="bar-seg bar-alloc" style={{ width: `${a}%` }} />
      <span className="bar-seg bar-bad" style={{ width: `${u}%` }} />
    </div>
  );
}
