/**
 * GPUs in use against a quota row: the guaranteed part (blue), the borrowed part above
 * guaranteed (amber, preemptible), a tick at `guaranteed`, the bar's end at `limit`.
 */
export function QuotaBar({ inUse, guaranteed, limit }: { inUse: number; guaranteed: number | null; limit: number | null }) {
  const max = Math.max(limit ?? 0, inUse, guaranteed ?? 0, 1);
  const pct = (n: number) => Math.max(0, Math.min(100, (n / max) * 100));
  const own = guaranteed === null ? inUse : Math.min(inUse, guaranteed);
  const borrowed = guaranteed === null ? 0 : Math.max(0, inUse - guaranteed);
  return (
    <div className="quota-bar" data-testid="usage-bar" role="img" aria-label={`${inUse} GPUs in use; guaranteed ${guaranteed ?? '-'}, limit ${limit ?? '-'}`}>
      <span className="bar-seg bar-alloc" style={{ width: `${pct(own)}%` }} />
      <span className="bar-seg bar-borrowed" style={{ width: `${pct(borrowed)}%` }} />
      {guaranteed !== null && <span className="quota-tick" style={{ left: `${pct(guaranteed)}%` }} title={`guaranteed ${guaranteed}`} />}
    </div>
  );
}
