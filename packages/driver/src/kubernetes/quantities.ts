/** Kubernetes resource quantities ("127500m", "128", "1056478196Ki", "1Ti") in Gantry's units. */

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** The quantity as a plain number (bytes, cores...); NaN when it is not a quantity. */
export function parseQuantity(quantity: string): number {
  const match = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)$/.exec(quantity.trim());
  if (!match) return Number.NaN;
  const [, value, suffix] = match;
  return Number(value) * (BINARY[suffix] ?? DECIMAL[suffix]);
}

export function cpuMilliOf(quantity: string | undefined): number {
  if (quantity === undefined) return 0;
  const cores = parseQuantity(quantity);
  return Number.isFinite(cores) ? Math.round(cores * 1000) : 0;
}

export function memoryMiBOf(quantity: string | undefined): number {
  if (quantity === undefined) return 0;
  const bytes = parseQuantity(quantity);
  return Number.isFinite(bytes) ? Math.floor(bytes / 2 ** 20) : 0;
}
