import { partitionModeLayoutOf } from '@gantry/contracts';
import type { V1Node } from '@kubernetes/client-node';
import { dcmLayoutsAdvertised, dcmProfileFor, dcmProgress, planDcmProfile, withDcmProfile, withDcmTaint } from './dcm-config';

const MI = 'MI300X-192GB';
const cpx4 = partitionModeLayoutOf(MI, 'cpx_nps4')!;
const qpx = partitionModeLayoutOf(MI, 'qpx_nps1')!;

describe("the Device Config Manager's profiles", () => {
  it('changes one GPU and skips the others, named after what it does', () => {
    expect(dcmProfileFor(MI, 8, { 3: cpx4 })).toEqual({
      name: 'gantry-g3-cpx-nps4',
      profile: { skippedGPUs: { ids: [0, 1, 2, 4, 5, 6, 7] }, profiles: [{ computePartition: 'CPX', memoryPartition: 'NPS4', numGPUsAssigned: 1 }] },
    });
    expect(dcmProfileFor(MI, 4, { 0: [], 1: [] }).profile.profiles).toEqual([{ computePartition: 'SPX', memoryPartition: 'NPS1', numGPUsAssigned: 2 }]);
  });

  it('refuses GPUs of two memory modes in one profile, as DCM does', () => {
    expect(() => dcmProfileFor(MI, 4, { 0: cpx4, 1: qpx })).toThrow(/one memory mode at a time \(asked for NPS4 and NPS1/);
  });

  it('keeps the profiles and keys others wrote', () => {
    const text = JSON.stringify({ 'gpu-config-profiles': { 'spx-profile': { profiles: [] } }, gpuClientSystemdServices: { names: ['gpuagent'] } });
    const file = JSON.parse(withDcmProfile(text, 'gantry-g3-cpx-nps4', dcmProfileFor(MI, 8, { 3: cpx4 }).profile));
    expect(Object.keys(file['gpu-config-profiles'])).toEqual(['spx-profile', 'gantry-g3-cpx-nps4']);
    expect(file.gpuClientSystemdServices).toEqual({ names: ['gpuagent'] });
  });

  it("plans what DCM does: entries in order over the GPUs not skipped; DCM's checks refuse bad profiles", () => {
    const file = JSON.parse(
      withDcmProfile(undefined, 'p', { skippedGPUs: { ids: [0] }, profiles: [{ computePartition: 'CPX', memoryPartition: 'NPS1', numGPUsAssigned: 3 }] }),
    );
    const plan = planDcmProfile(file, 'p', MI, 4);
    expect(plan.ok && Object.keys(plan.layouts)).toEqual(['1', '2', '3']);
    expect(planDcmProfile(file, 'p', MI, 8)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^InvalidProfileInfo: numGPUsAssigned \(3\) plus skippedGPUs \(1\)/),
    });
    expect(planDcmProfile(file, 'nope', MI, 4)).toMatchObject({ ok: false, reason: expect.stringMatching(/^NonExistentProfile/) });
    expect(planDcmProfile(undefined, 'p', MI, 4)).toMatchObject({ ok: false, reason: expect.stringMatching(/^ConfigMapNotPresent/) });
    const bad = JSON.parse(withDcmProfile(undefined, 'q', { profiles: [{ computePartition: 'QPX', memoryPartition: 'NPS4', numGPUsAssigned: 4 }] }));
    expect(planDcmProfile(bad, 'q', MI, 4)).toMatchObject({ ok: false, reason: 'InvalidProfileInfo: NPS4 on MI300X-192GB allows only CPX (got QPX)' });
  });

  it('reads the state label of the profile asked for only', () => {
    const labels = { 'dcm.amd.com/gpu-config-profile': 'a', 'dcm.amd.com/gpu-config-profile-state': 'success' };
    expect(dcmProgress(labels, 'a')).toBe('applied');
    expect(dcmProgress(labels, 'b')).toBe('waiting');
    expect(dcmProgress({ ...labels, 'dcm.amd.com/gpu-config-profile-state': 'failure' }, 'a')).toBe('failed');
  });

  it("adds and removes DCM's taint, keeping the others", () => {
    const other = { key: 'x', effect: 'NoSchedule' };
    expect(withDcmTaint([other], true)).toEqual([other, { key: 'amd-dcm', value: 'up', effect: 'NoExecute' }]);
    expect(withDcmTaint(withDcmTaint([other], true), false)).toEqual([other]);
  });

  it("sees the device plugin's partitions in strategy mixed or single", () => {
    const layouts = { 0: [], 1: cpx4 };
    const withCapacity = (capacity: Record<string, string>) => ({ status: { capacity } }) as V1Node;
    expect(dcmLayoutsAdvertised(withCapacity({ 'amd.com/gpu': '1', 'amd.com/cpx_nps4': '8', cpu: '64' }), layouts)).toBe(true);
    expect(dcmLayoutsAdvertised(withCapacity({ 'amd.com/gpu': '9' }), layouts)).toBe(true);
    expect(dcmLayoutsAdvertised(withCapacity({ 'amd.com/gpu': '2' }), layouts)).toBe(false);
  });
});
