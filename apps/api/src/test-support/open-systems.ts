/**
 * Systems a test file started and has not closed yet. Kept apart from system.ts (which loads
 * the whole application) so that Jest's per-file safety net costs unit specs nothing.
 */
const open = new Set<{ close(): Promise<void> }>();

export const openSystems = {
  add: (s: { close(): Promise<void> }) => open.add(s),
  delete: (s: { close(): Promise<void> }) => open.delete(s),
};

/** Closes what a test file left open (its start or its own afterAll failed): the file's last hook. */
export async function closeOpenSystems(): Promise<void> {
  const results = await Promise.allSettled([...open].map((s) => s.close()));
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length) throw new Error(failed.map((f) => String(f.reason)).join('; '));
}
