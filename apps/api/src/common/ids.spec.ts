import { newId } from './ids';

describe('newId', () => {
  it('has the shape of a cuid: 25 lower-case base-36 characters starting with c', () => {
    expect(newId()).toMatch(/^c[0-9a-z]{24}$/);
  });

  it('does not repeat within a burst of ids', () => {
    const wantCount = 10_000;
    expect(new Set(Array.from({ length: wantCount }, () => newId(0))).size).toBe(wantCount);
  });

  it('sorts ids of a later millisecond after earlier ones', () => {
    expect(newId(2_000_000_000_000) > newId(1_000_000_000_000)).toBe(true);
  });
});

describe('newId random part', () => {
  it('uses every base-36 character about evenly over many ids', () => {
    const seen = new Map<string, number>();
    for (let i = 0; i < 3_000; i++) for (const ch of newId(0).slice(-12)) seen.set(ch, (seen.get(ch) ?? 0) + 1);
    expect(seen.size).toBe(36);
    // 36,000 characters: 1,000 expected per character (mod 36 of a byte favours 0-3 by 8/7)
    for (const n of seen.values()) expect(n).toBeGreaterThan(700);
  });
});
