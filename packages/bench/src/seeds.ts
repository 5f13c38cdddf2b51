/** '42-51' or '42,43,50' -> list of seeds. */
export function parseSeeds(s: string): number[] {
  const out: number[] = [];
  for (const part of s.split(',')) {
    const m = /^(\d+)-(\d+)$/.exec(part.trim());
    if (m) for (let x = Number(m[1]); x <= Number(m[2]); x++) out.push(x);
    else if (part.trim()) out.push(Number(part));
  }
  return out;
}
