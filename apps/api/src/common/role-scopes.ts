/** Scopes per role and role ranks: shared with the console (packages/contracts). */
export { ROLE_RANK, ROLE_SCOPES } from '@gantry/contracts';
