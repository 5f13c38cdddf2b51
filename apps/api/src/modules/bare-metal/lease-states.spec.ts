import { pickIdleNodes, settledLeaseState } from './lease-states';

describe('settledLeaseState', () => {
  it('a queued lease stays pending until it holds every node, then provisions, then is deployed', () => {
    expect(settledLeaseState({ state: 'pending', count: 2 }, ['provisioning'])).toBeNull();
    expect(settledLeaseState({ state: 'pending', count: 2 }, ['deployed', 'provisioning'])).toBe('provisioning');
    expect(settledLeaseState({ state: 'pending', count: 2 }, ['deployed', 'deployed'])).toBe('deployed');
    expect(settledLeaseState({ state: 'provisioning', count: 2 }, ['deployed', 'provisioning'])).toBeNull();
    expect(settledLeaseState({ state: 'provisioning', count: 2 }, ['deployed', 'deployed'])).toBe('deployed');
  });

  it('suspend ends when every node is off, resume when every node is up, release when no node is left', () => {
    expect(settledLeaseState({ state: 'suspending', count: 2 }, ['powered_off', 'powering_off'])).toBeNull();
    expect(settledLeaseState({ state: 'suspending', count: 2 }, ['powered_off', 'powered_off'])).toBe('suspended');
    expect(settledLeaseState({ state: 'resuming', count: 1 }, ['powering_on'])).toBeNull();
    expect(settledLeaseState({ state: 'resuming', count: 1 }, ['deployed'])).toBe('deployed');
    expect(settledLeaseState({ state: 'releasing', count: 1 }, ['deprovisioning'])).toBeNull();
    expect(settledLeaseState({ state: 'releasing', count: 1 }, [])).toBe('released');
    expect(settledLeaseState({ state: 'deployed', count: 1 }, ['deployed'])).toBeNull();
  });
});

describe('pickIdleNodes', () => {
  const idle = [
    { id: '1', name: 'n-a1', leaf: 'a' },
    { id: '2', name: 'n-b1', leaf: 'b' },
    { id: '3', name: 'n-b2', leaf: 'b' },
    { id: '4', name: 'n-a0', leaf: 'a' },
    { id: '5', name: 'n-b0', leaf: 'b' },
  ];

  it('takes the first idle nodes by name, as many as are still needed', () => {
    expect(pickIdleNodes(idle, { need: 2, sameLeaf: false, heldLeaves: [] }).map((n) => n.name)).toEqual(['n-a0', 'n-a1']);
    expect(pickIdleNodes(idle, { need: 0, sameLeaf: false, heldLeaves: [] })).toEqual([]);
  });

  it('a multi-node set starts under the leaf with the most idle nodes and stays under the leaf it holds', () => {
    expect(pickIdleNodes(idle, { need: 3, sameLeaf: true, heldLeaves: [] }).map((n) => n.name)).toEqual(['n-b0', 'n-b1', 'n-b2']);
    expect(pickIdleNodes(idle, { need: 3, sameLeaf: true, heldLeaves: ['a'] }).map((n) => n.name)).toEqual(['n-a0', 'n-a1']);
  });
});
