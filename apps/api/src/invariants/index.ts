export type { InvariantRule, InvariantViolation, InvariantReport, CheckOptions, StrictRule, SettledRule } from './types';
export { STRICT_RULES, SETTLED_RULES } from './types';
export { checkInvariants, strictViolations } from './check';
export { formatReport } from './format';
