import type { Role } from '@gantry/contracts';
import type { Principal } from '../../common/principal';
import { mayRevoke } from './may-revoke';

const caller = (role: Role, teamId: string | null, owner: string): Principal => ({
  keyId: 'k-caller',
  name: 'caller',
  role,
  scopes: [],
  tenantId: 't1',
  teamId,
  owner,
});
const key = (role: 'member' | 'team_admin' | 'tenant_admin', teamId: string | null, owner: string) => ({ id: 'k1', role, teamId, owner, userId: null });

describe('mayRevoke: who is offered (and allowed) Revoke', () => {
  it.each([
    { name: "a member, on a team admin's key of its team", p: caller('member', 'a', 'user:max'), k: key('team_admin', 'a', 'user:ada'), wantAllowed: false },
    { name: "a member, on another member's key", p: caller('member', 'a', 'user:max'), k: key('member', 'a', 'user:eve'), wantAllowed: false },
    { name: 'a member, on its own key', p: caller('member', 'a', 'user:max'), k: key('member', 'a', 'user:max'), wantAllowed: true },
    { name: "a team admin, on a member's key of its team", p: caller('team-admin', 'a', 'user:ada'), k: key('member', 'a', 'user:max'), wantAllowed: true },
    {
      name: "a team admin, on a member's key of another team",
      p: caller('team-admin', 'a', 'user:ada'),
      k: key('member', 'b', 'user:bob'),
      wantAllowed: false,
    },
    { name: "a team admin, on a tenant admin's key", p: caller('team-admin', 'a', 'user:ada'), k: key('tenant_admin', null, 'user:tess'), wantAllowed: false },
    { name: "a tenant admin, on a team admin's key", p: caller('tenant-admin', null, 'user:tess'), k: key('team_admin', 'a', 'user:ada'), wantAllowed: true },
  ])('$name', ({ p, k, wantAllowed }) => {
    expect(mayRevoke(p, k) === null).toBe(wantAllowed);
  });
});
