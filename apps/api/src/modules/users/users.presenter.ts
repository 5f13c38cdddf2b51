import type { User } from '@gantry/contracts';
import { roleToApi, type DbRole } from '../../common/roles';

export const presentUser = (u: {
  id: string;
  email: string;
  name: string;
  role: DbRole;
  tenantId: string | null;
  teamId: string | null;
  createdAt: Date;
}): User => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: roleToApi(u.role),
  tenantId: u.tenantId,
  teamId: u.teamId,
  createdAt: u.createdAt.toISOString(),
});
