import { redact } from './audit.interceptor';

describe('audit redaction', () => {
  it.each([
    { name: 'a password at the top', input: { email: 'a@b.c', password: 'hunter2-hunter2' }, want: { email: 'a@b.c', password: '[redacted]' } },
    { name: 'a key inside a list', input: { items: [{ key: 'gk_x_y', name: 'n' }] }, want: { items: [{ key: '[redacted]', name: 'n' }] } },
    { name: 'nothing secret', input: { quotas: [{ gpuModel: '*', guaranteed: 1, limit: 2 }] }, want: { quotas: [{ gpuModel: '*', guaranteed: 1, limit: 2 }] } },
    { name: 'a scalar', input: 3, want: 3 },
  ])('$name', ({ input, want }) => {
    expect(redact(input)).toEqual(want);
  });
});
