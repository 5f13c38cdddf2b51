import { MicroBatch } from './micro-batch';

describe('MicroBatch', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('hands over what arrived within the window together, then opens a new window', async () => {
    const flushed: number[][] = [];
    const b = new MicroBatch<number>(async (xs) => void flushed.push(xs), 20, 100);
    b.add(1);
    b.add(2);
    jest.advanceTimersByTime(19);
    expect(flushed).toEqual([]);
    jest.advanceTimersByTime(1);
    b.add(3);
    await b.drain();
    expect(flushed).toEqual([[1, 2], [3]]);
  });

  it('closes a full window at once, and one failed flush does not stop the next', async () => {
    const flushed: number[][] = [];
    const b = new MicroBatch<number>(
      async (xs) => {
        flushed.push(xs);
        if (xs.includes(1)) throw new Error('database down');
      },
      20,
      2,
    );
    b.add(1);
    b.add(2);
    b.add(3);
    await b.drain();
    expect(flushed).toEqual([[1, 2], [3]]);
  });
});
