import { crashPoint, parseCrashPoints, resetCrashPointsForTest } from './crash-points';

describe('crash points', () => {
  it.each([
    ['', {}],
    ['placement.commit=0.2,mig.applied=1', { 'placement.commit': 0.2, 'mig.applied': 1 }],
    ['persona.switched', { 'persona.switched': 1 }],
    ['a=0, b=7, c=nope', { b: 1 }],
  ])('parses %j', (spec, want) => {
    expect(Object.fromEntries(parseCrashPoints(spec))).toEqual(want);
  });

  it('does nothing when the point is not armed', () => {
    const kill = jest.spyOn(process, 'kill').mockImplementation(() => true);
    process.env.GANTRY_CRASH_POINTS = 'mig.applied=1';
    resetCrashPointsForTest();
    crashPoint('placement.commit');
    expect(kill).not.toHaveBeenCalled();
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    crashPoint('mig.applied');
    expect(kill).toHaveBeenCalledWith(process.pid, 'SIGKILL');
    expect(String(write.mock.calls[0]?.[0])).toContain('CRASH POINT mig.applied');
    kill.mockRestore();
    write.mockRestore();
    delete process.env.GANTRY_CRASH_POINTS;
    resetCrashPointsForTest();
  });
});
