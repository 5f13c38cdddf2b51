import { parseFault } from './control-api';

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
    ['a negative gpuIndex', { nodeName: 'n', kind: 'xid', gpuIndex: -1 }, 'gpuIndex'],
    ['an unknown field', { nodeName: 'n', kind: 'recover', extra: 1 }, 'extra'],
  ])('refuses %s', (_what, body, wantMention) => {
    const parsed = parseFault(body);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toContain(wantMention);
  });
});
