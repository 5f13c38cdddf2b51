/**
 * The unique key an active allocation holds (`Allocation.activeSlot`): `<gpuId>:whole` for a
 * whole GPU, `<gpuId>:mig:<start>` for a MIG slice, none for a share (shares are summed under a
 * row lock instead). Its unique index is what makes holding one slot twice impossible.
 */
export function activeSlotKey(a: { gpuId: string; migProfile?: string | null; migStart?: number | null; milli: number }): string | null {
  if (a.migProfile) return `${a.gpuId}:mig:${a.migStart}`;
  return a.milli >= 1000 ? `${a.gpuId}:whole` : null;
}
