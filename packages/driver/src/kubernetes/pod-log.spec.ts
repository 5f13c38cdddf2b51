import { parsePodLog } from './pod-log';

describe('parsePodLog', () => {
  it('reads the time of each line and gives a line read twice the same seq', () => {
    const text = '2026-12-02T07:00:01.123456789Z step 10 | loss 2.5\n2026-12-02T07:00:01.123456789Z step 11\n2026-12-02T07:00:02Z done\n';
    const lines = parsePodLog(text, 1);
    expect(lines.map((l) => [l.at, l.replica, l.text])).toEqual([
      [Date.parse('2026-12-02T07:00:01.123Z'), 1, 'step 10 | loss 2.5'],
      [Date.parse('2026-12-02T07:00:01.123Z'), 1, 'step 11'],
      [Date.parse('2026-12-02T07:00:02Z'), 1, 'done'],
    ]);
    expect(new Set(lines.map((l) => l.seq)).size).toBe(3);
    expect(parsePodLog(text.split('\n').slice(2).join('\n'), 1)).toEqual([lines[2]]);
    expect(parsePodLog(text, 1)).toEqual(lines);
  });
});
