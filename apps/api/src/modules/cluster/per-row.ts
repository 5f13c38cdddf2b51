import type { NodeRow } from './cluster.repository';

/**
 * A function of a node row, computed once per row object: the worker's snapshot replaces only the
 * rows of nodes that changed (and keeps unchanged rows across full reloads), so at 10,000 nodes a
 * per-cycle pass costs one lookup per unchanged node. The result is shared: never change it.
 */
export function perRow<T extends object>(derive: (n: NodeRow) => T): (n: NodeRow) => T {
  const memo = new WeakMap<NodeRow, T>();
  return (n) => {
    let value = memo.get(n);
    if (value === undefined) memo.set(n, (value = derive(n)));
    return value;
  };
}
