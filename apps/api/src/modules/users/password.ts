import { hash, verify, Algorithm } from '@node-rs/argon2';
import { DomainError } from '../../common/errors';

/** argon2id with OWASP's minimum (19 MiB, 2 passes, 1 lane). */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string) => hash(password, OPTIONS);

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** Compared against when the email is unknown, so that both paths cost the same. */
let dummy: Promise<string> | undefined;
export const dummyHash = () => (dummy ??= hashPassword('gantry-dummy-password-for-timing'));

const COMMON = new Set([
  'password1234',
  'password12345',
  'password123456',
  '123456789012',
  '1234567890123',
  'qwertyuiopas',
  'qwerty123456',
  'iloveyou1234',
  'letmein12345',
  'administrator',
  'welcome12345',
  'changeme1234',
  'passwordpassword',
  'aaaaaaaaaaaa',
  '111111111111',
  'abcdefghijkl',
  'abc123456789',
  'gantrygantry',
  'correcthorsebatterystaple',
]);

/**
 * Password rules (NIST SP 800-63B: length over composition): 12+ characters, not a well-known
 * password, not one or two characters repeated, not the email. A 400 names the rule.
 */
export function checkPassword(password: string, email: string): void {
  const fail = (rule: string, problem: string) => {
    throw new DomainError('validation_failed', `password: rule ${rule}: ${problem}`, [{ field: 'password', problem: `rule ${rule}: ${problem}` }]);
  };
  if (password.length < 12) fail('password_length', 'must be at least 12 characters');
  const lower = password.toLowerCase();
  if (COMMON.has(lower)) fail('password_common', 'is a well-known password');
  if (new Set(lower).size < 5) fail('password_repetitive', 'uses fewer than 5 different characters');
  const local = email.split('@')[0]!.toLowerCase();
  if (local.length >= 4 && lower.includes(local)) fail('password_contains_email', 'must not contain the email name');
}
