/** A MIG layout as a comparable key (`1g.10gb@0,3g.40gb@4`, sorted): equal keys, same slices. */
export const layoutKey = (layout: readonly { profile: string; start: number }[]) =>
  layout
    .map((e) => `${e.profile}@${e.start}`)
    .sort()
    .join(',');
