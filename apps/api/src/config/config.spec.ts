import { parseConfig } from './config';

describe('parseConfig: GANTRY_HEAP_GROWTH_PERCENT', () => {
  it('lets the heap grow 50% past the live heap in the API and 100% in a worker unless told otherwise; 0 leaves V8 its own policy', () => {
    expect(parseConfig({}).heapGrowthPercent).toBe(50);
    expect(parseConfig({ GANTRY_MODE: 'worker' }).heapGrowthPercent).toBe(100);
    expect(parseConfig({ GANTRY_MODE: 'worker', GANTRY_HEAP_GROWTH_PERCENT: '50' }).heapGrowthPercent).toBe(50);
    expect(parseConfig({ GANTRY_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(parseConfig({ GANTRY_HEAP_GROWTH_PERCENT: '150' }).heapGrowthPercent).toBe(150);
  });

  it.each(['-1', '401', '12.5', 'lots'])('refuses %s, naming the variable', (v) => {
    expect(() => parseConfig({ GANTRY_HEAP_GROWTH_PERCENT: v })).toThrow(/GANTRY_HEAP_GROWTH_PERCENT/);
  });
});

describe('parseConfig: the API database pools', () => {
  it('keeps 10 connections for writes and 3 of their own for reads unless told otherwise', () => {
    expect(parseConfig({})).toMatchObject({ dbPoolSize: 10, dbReadPoolSize: 3 });
    expect(parseConfig({ GANTRY_DB_POOL_SIZE: '20', GANTRY_DB_READ_POOL_SIZE: '5' })).toMatchObject({ dbPoolSize: 20, dbReadPoolSize: 5 });
  });

  it.each(['0', '201', '1.5', 'few'])('refuses a read pool of %s, naming the variable', (v) => {
    expect(() => parseConfig({ GANTRY_DB_READ_POOL_SIZE: v })).toThrow(/GANTRY_DB_READ_POOL_SIZE/);
  });
});
