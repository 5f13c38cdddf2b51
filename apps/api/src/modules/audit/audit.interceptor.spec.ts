import { redact } from './audit.interceptor';

describe('audit redaction', () => {
  it.each([
    { name: 'a password at the top', input: { email: 'a@b.c', password: 'hunter2-hunter2' }, want: { email: 'a@b.c', password: '[redacted]' } },
    { name: 'a key inside a list', input: { items: [{ key: 'gk_x_y', name: 'n' }] }, want: { items: [{ key: '[redacted]', name: 'n' }] } },
    { name: 'nothing secret', input: { quotas: [{ gpuModel: '*', guaranteed: 1, limit: 2 }] }, want: { quotas: [{ gpuModel: '*', guaranteed: 1, limit: 2 }] } },
    { name: 'a scalar', input: 3, want: 3 },
    { name: 'a secret under another spelling', input: { newPassword: 'p', apiToken: 't' }, want: { newPassword: '[redacted]', apiToken: '[redacted]' } },
    { name: 'unstorable strings (NUL, lone surrogate)', input: { a: 'x\u0000y', ['k\ud800']: '\udc00' }, want: { a: 'x\uFFFDy', 'k\uFFFD': '\uFFFD' } },
    {
      name: 'nesting past the depth limit (cut, not passed on)',
      input: { a: { a: { a: { a: { a: { a: { a: { a: 1 } } } } } } } },
      want: { a: { a: { a: { a: { a: { a: { a: '[truncated]' } } } } } } },
    },
  ])('$name', ({ input, want }) => {
    expect(redact(input)).toEqual(want);
  });
});
