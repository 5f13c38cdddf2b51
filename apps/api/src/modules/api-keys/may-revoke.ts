import { ROLE_RANK } from '@gantry/contracts';
import { keyOwner, ownerOf, type Principal } from '../../common/principal';
import { roleToApi, type DbRole } from '../../common/roles';

/**
 * Why the caller may not revoke this key, or null when it may: never a key stronger than itself;
 * its own keys, or, as an admin, the keys of the team or tenant it administers. The list answers
 * with the same rule (`canRevoke`), so the console offers Revoke only where it will work.
 */
export function mayRevoke(p: Principal, row: { id: string; role: DbRole; teamId: string | null; owner: string | null; userId: string | null }): string | null {
  if (ROLE_RANK[roleToApi(row.role)] > ROLE_RANK[p.role]) return 'this key is stronger than the caller';
  const own = keyOwner(row) === ownerOf(p);
  const administers = p.role === 'platform-admin' || p.role === 'tenant-admin' || (p.role === 'team-admin' && row.teamId !== null && row.teamId === p.teamId);
  return own || administers ? null : 'only the owner of a key or an admin may revoke it';
}
