import { parseFault, parseRepair } from './control-api';

describe('parseFault', () => {
  it.each([
    [
      { nodeName: 'n', kind: 'xid', gpuIndex: 2, xid: 48 },
      { nodeName: 'n', kind: 'xid', gpuIndex: 2, xid: 48 },
    ],
    [
      { nodeName: 'n', kind: 'recover' },
      { nodeName: 'n', kind: 'recover' },
    ],
  ])('takes %j', (body, want) => {
    expect(parseFault(body)).toEqual({ ok: true, fault: want });
  });

  it.each([
    ['no body', undefined, 'JSON object'],
    ['no node', { kind: 'recover' }, 'nodeName'],
    ['a bad kind', { nodeName: 'n', kind: 'fire' }, 'kind'],
    ['an xid without gpuIndex', { nodeName: 'n', kind: 'xid' }, 'gpuIndex'],
    ['a latent fault without gpuIndex', { nodeName: 'n', kind: 'latent' }, 'gpuIndex'],
    ['a negative gpuIndex', { nodeName: 'n', kind: 'xid', gpuIndex: -1 }, 'gpuIndex'],
    ['an unknown field', { nodeName: 'n', kind: 'recover', extra: 1 }, 'extra'],
  ])('refuses %s', (_what, body, wantMention) => {
    const parsed = parseFault(body);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toContain(wantMention);
  });
});

describe('parseRepair', () => {
  it('takes a node reboot and a GPU reset', () => {
    expect(parseRepair({ nodeName: 'n' })).toEqual({ ok: true, nodeName: 'n' });
    expect(parseRepair({ nodeName: 'n', gpuIndex: 3 })).toEqual({ ok: true, nodeName: 'n', gpuIndex: 3 });
  });

  it.each([
    ['no node', { gpuIndex: 1 }, 'nodeName'],
    ['an xid', { nodeName: 'n', xid: 79 }, 'xid'],
    ['a bad gpuIndex', { nodeName: 'n', gpuIndex: 'one' }, 'gpuIndex'],
    ['not an object', [1], 'JSON object'],
  ])('refuses %s', (_what, body, wantMention) => {
    const parsed = parseRepair(body);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toContain(wantMention);
  });
});
