import { DomainError } from '../../common/errors';
import { checkPassword, hashPassword, verifyPassword } from './password';

describe('passwords', () => {
  it.each([
    { name: 'a long passphrase', password: 'violet-harbour-42-kites', wantRule: null },
    { name: 'eleven characters', password: 'abcdefghijk', wantRule: 'password_length' },
    { name: 'a well-known password', password: 'Password1234', wantRule: 'password_common' },
    { name: 'two characters repeated', password: 'abababababababab', wantRule: 'password_repetitive' },
    { name: 'the email name inside', password: 'my-grace-hopper-99', wantRule: 'password_contains_email' },
  ])('$name', ({ password, wantRule }) => {
    let rule: string | null = null;
    try {
      checkPassword(password, 'grace@example.com');
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).code).toBe('validation_failed');
      rule = /rule (\w+)/.exec((e as DomainError).message)?.[1] ?? 'unknown';
    }
    expect(rule).toBe(wantRule);
  });

  it('hashes with argon2id and verifies only the right password', async () => {
    const h = await hashPassword('violet-harbour-42-kites');
    expect(h).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(h, 'violet-harbour-42-kites')).toBe(true);
    expect(await verifyPassword(h, 'violet-harbour-42-kiteS')).toBe(false);
    expect(await verifyPassword('not a hash', 'x')).toBe(false);
  });
});
