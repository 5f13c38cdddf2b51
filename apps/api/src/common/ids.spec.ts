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
