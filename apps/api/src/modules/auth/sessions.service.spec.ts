import type { DomainError } from '../../common/errors';
import type { AppConfig } from '../../config/config';
import type { SessionsRepository } from './sessions.repository';

// Counts the argon2 verifications a sign-in makes (the real ones run underneath). A fresh module
// registry: the setup file has loaded the whole app, this service with the real password module too.
const verifications: string[] = [];
jest.resetModules();
jest.doMock('../users/password', () => {
  const actual = jest.requireActual<typeof import('../users/password')>('../users/password');
  return {
    ...actual,
    verifyPassword: async (stored: string, password: string) => {
      verifications.push(stored);
      return actual.verifyPassword(stored, password);
    },
  };
});
// After the mock: the service under test sees the counting verifyPassword.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { hashPassword } = require('../users/password') as typeof import('../users/password');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MAX_ACCOUNTS_PER_EMAIL, SessionsService, SignInRefused } = require('./sessions.service') as typeof import('./sessions.service');

type Row = {
  id: string;
  email: string;
  name: string;
  role: 'member';
  tenantId: string;
  teamId: null;
  passwordHash: string | null;
  createdAt: Date;
  tenantSlug: string;
};

/** Sign-in by e-mail when an address has accounts in several tenants (unique per tenant). */
describe('SessionsService.login', () => {
  let users: Row[];
  const repo = {
    findUsersByEmail: async (email: string, opts: { tenantSlug?: string; take: number }) =>
      users.filter((u) => u.email === email && (!opts.tenantSlug || u.tenantSlug === opts.tenantSlug)).slice(0, opts.take),
    create: async () => ({}),
  } as unknown as SessionsRepository;
  // Sign-in by password uses neither the key service nor the revocations.
  const svc = new SessionsService(repo, {} as never, {} as never, { auth: { sessionHours: 1 } } as AppConfig);
  const user = async (tenantSlug: string, password: string | null): Promise<Row> => ({
    id: `u-${tenantSlug}`,
    email: 'x@example.com',
    name: tenantSlug,
    role: 'member',
    tenantId: `t-${tenantSlug}`,
    teamId: null,
    passwordHash: password ? await hashPassword(password) : null,
    createdAt: new Date(),
    tenantSlug,
  });
  const attempt = async (password: string, tenant?: string) => {
    verifications.length = 0;
    try {
      const r = await svc.login('x@example.com', password, null, { tenant });
      return { ok: r.result.user.tenantId, checks: verifications.length };
    } catch (e) {
      return { error: `${(e as DomainError).code} ${(e as DomainError).details.map((d) => d.field).join()}`, checks: verifications.length };
    }
  };

  it('an unknown e-mail costs one password check, like an e-mail with one account', async () => {
    users = [];
    expect(await attempt('lilac-comet-77-ferries')).toEqual({ error: 'unauthenticated ', checks: 1 });
    users = [await user('a', 'lilac-comet-77-ferries')];
    expect(await attempt('wrong-password-here')).toEqual({ error: 'unauthenticated ', checks: 1 });
    expect(await attempt('lilac-comet-77-ferries')).toEqual({ ok: 't-a', checks: 1 });
    users = [await user('a', null)];
    expect(await attempt('lilac-comet-77-ferries')).toEqual({ error: 'unauthenticated ', checks: 1 });
  });

  it('checks every account with the address (no early exit) and signs in the one the password opens', async () => {
    users = [await user('a', 'pw-of-tenant-a-123'), await user('b', 'pw-of-tenant-b-456'), await user('c', null)];
    expect(await attempt('pw-of-tenant-a-123')).toEqual({ ok: 't-a', checks: 3 });
    expect(await attempt('pw-of-tenant-b-456')).toEqual({ ok: 't-b', checks: 3 });
    expect(await attempt('neither-password-1')).toEqual({ error: 'unauthenticated ', checks: 3 });
  });

  it('a refused sign-in names the tenants of the accounts tried (each tenant audits it), none for an unknown address', async () => {
    const refused = async () =>
      svc.login('x@example.com', 'neither-password-1', null).then(
        () => undefined,
        (e: unknown) => e,
      );
    users = [await user('a', 'pw-of-tenant-a-123'), await user('b', null)];
    const e = await refused();
    expect(e).toBeInstanceOf(SignInRefused);
    expect((e as InstanceType<typeof SignInRefused>).tenantIds).toEqual(['t-a', 't-b']);
    users = [];
    expect(((await refused()) as InstanceType<typeof SignInRefused>).tenantIds).toEqual([]);
  });

  it('asks for the tenant (400 naming it) when the password opens accounts in several tenants; the slug picks one', async () => {
    users = [await user('a', 'same-password-99'), await user('b', 'same-password-99')];
    expect(await attempt('same-password-99')).toEqual({ error: 'validation_failed tenant', checks: 2 });
    expect(await attempt('same-password-99', 'b')).toEqual({ ok: 't-b', checks: 1 });
    expect(await attempt('same-password-99', 'zz')).toEqual({ error: 'unauthenticated ', checks: 1 });
  });

  it(`checks at most ${MAX_ACCOUNTS_PER_EMAIL} accounts`, async () => {
    const hash = await hashPassword('many-tenants-pw-1');
    const base = await user('base', null);
    users = Array.from({ length: MAX_ACCOUNTS_PER_EMAIL + 3 }, (_, i) => ({
      ...base,
      id: `u${i}`,
      tenantId: `t${i}`,
      tenantSlug: `s${i}`,
      passwordHash: i === MAX_ACCOUNTS_PER_EMAIL + 2 ? hash : null,
    }));
    expect(await attempt('many-tenants-pw-1')).toEqual({ error: 'unauthenticated ', checks: MAX_ACCOUNTS_PER_EMAIL });
    expect(await attempt('many-tenants-pw-1', `s${MAX_ACCOUNTS_PER_EMAIL + 2}`)).toEqual({ ok: `t${MAX_ACCOUNTS_PER_EMAIL + 2}`, checks: 1 });
  });
});
