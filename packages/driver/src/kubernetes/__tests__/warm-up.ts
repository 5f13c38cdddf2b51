/**
 * Loads @kubernetes/client-node (and the OIDC libraries it pulls in) once, in a hook with a long
 * timeout: Jest transforms and loads them on first use, which took more than 15 s on a busy
 * machine and failed the first test of a file that way. Call it from a beforeAll.
 */
import { loadClientNode } from '../kube-api';

export const WARM_UP_TIMEOUT_MS = 120_000;

export async function warmUpClientNode(): Promise<void> {
  loadClientNode();
  await Promise.resolve();
}
