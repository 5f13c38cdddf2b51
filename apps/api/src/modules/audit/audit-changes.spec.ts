import { changesBetween } from './audit-changes';

describe('audit before → after', () => {
  it('records only the fields whose value moved, old and new', () => {
    expect(changesBetween({ limit: 8, guaranteed: 4, scopes: ['jobs:read'] }, { limit: 16, guaranteed: 4, scopes: ['jobs:read', 'jobs:write'] })).toEqual({
      limit: { from: 8, to: 16 },
      scopes: { from: ['jobs:read'], to: ['jobs:read', 'jobs:write'] },
    });
  });

  it('a field that appears or goes away reads as null on the other side', () => {
    expect(changesBetween({ 'A100-80GB limit': 8 }, { limit: 4 })).toEqual({
      'A100-80GB limit': { from: 8, to: null },
      limit: { from: null, to: 4 },
    });
    expect(changesBetween({ name: 'nightly', gpus: 2 }, null)).toEqual({ name: { from: 'nightly', to: null }, gpus: { from: 2, to: null } });
  });

  it('nothing moved, or nothing to compare: null', () => {
    expect(changesBetween({ state: 'running' }, { state: 'running' })).toBeNull();
    expect(changesBetween(null, null)).toBeNull();
  });

  it('never carries a secret, even when a subject names one', () => {
    expect(changesBetween({ passwordHash: 'a', apiToken: 'x', name: 'a' }, { passwordHash: 'b', apiToken: 'y', name: 'b' })).toEqual({
      name: { from: 'a', to: 'b' },
    });
    expect(changesBetween({ resources: { gpus: 1 } }, { resources: { gpus: 2, secret: 's3cr3t' } })).toEqual({
      resources: { from: { gpus: 1 }, to: { gpus: 2, secret: '[redacted]' } },
    });
  });
});
