import { safeEqual } from './safe-equal';

// The module object itself (an `import * as` namespace would be a copy that a spy does not reach).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crypto: typeof import('node:crypto') = require('node:crypto');

describe('safeEqual (constant-time comparison of secrets)', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each([
    { name: 'equal strings', a: 'csrf-token-abc', b: 'csrf-token-abc', want: true },
    { name: 'one character off', a: 'csrf-token-abc', b: 'csrf-token-abd', want: false },
    { name: 'a prefix', a: 'csrf-token-abc', b: 'csrf-token', want: false },
    { name: 'empty against a token', a: '', b: 'csrf-token-abc', want: false },
    { name: 'both empty', a: '', b: '', want: true },
    { name: 'equal buffers', a: Buffer.from('00ff', 'hex'), b: Buffer.from('00ff', 'hex'), want: true },
    { name: 'unicode', a: 'ключ-ü', b: 'ключ-u', want: false },
  ])('$name -> $want', ({ a, b, want }) => {
    expect(safeEqual(a, b)).toBe(want);
  });

  it('decides with crypto.timingSafeEqual, whatever the lengths (fails if replaced by ===)', () => {
    const spy = jest.spyOn(crypto, 'timingSafeEqual');
    expect(safeEqual('short', 'a much longer value')).toBe(false);
    expect(safeEqual('same', 'same')).toBe(true);
    expect(spy).toHaveBeenCalledTimes(2);
    for (const [x, y] of spy.mock.calls) expect([(x as Buffer).length, (y as Buffer).length]).toEqual([32, 32]);
  });
});
