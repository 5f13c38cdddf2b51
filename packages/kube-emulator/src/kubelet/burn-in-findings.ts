/**
 * A burn-in pod on an emulated node (`gantry.io/job-kind: burn-in`, docs/reference/gpu.md section 3):
 * what its diagnostic finds on the GPUs the device plugin gave it, written the way the default
 * burn-in command writes it (one `gpu <index> pass|fail <detail>` line per GPU in the container's
 * termination message). Sound GPUs pass at the end of its duration; a GPU with a latent defect
 * fails its stress phase part way through (exit 1), as on the simulated cluster, and the diagnostic
 * is reported on the Node as a Warning Event. Pure functions.
 */
import { BURN_IN_KIND, formatBurnInFindings, kubernetesSpecs, type BurnInFinding } from '@gantry/driver';
import type { V1Pod } from '@kubernetes/client-node';
import type { EmulatedGpu } from '../cluster/emulated-node';
import type { Termination } from './pod-status';

/** Share of a burn-in's length after which its stress phase finds a latent defect (the simulated driver's). */
export const BURN_IN_FINDS_LATENT_AT = 0.4;

/** Reason of the Warning Event a failed burn-in leaves on its Node. */
export const BURN_IN_FAILED_EVENT_REASON = 'GpuDiagnosticFailed';

export const isBurnInPod = (pod: V1Pod): boolean => pod.metadata?.annotations?.[kubernetesSpecs.GANTRY_ANNOTATIONS.jobKind] === BURN_IN_KIND;

const LATENT_DETAIL = 'targeted_stress: GPU fell off the bus under load; idle checks had passed';

export interface BurnInOutcome {
  /** Seconds after the pod started at which it ends with `termination`; undefined: at the end of its duration. */
  failAtSeconds?: number;
  termination: Termination;
  /** The GPUs it failed (for the Event). */
  failed: number[];
}

/** What a burn-in pod on `gpus` ends with; `durationSeconds` is the pod's remaining duration when it started. */
export function burnInOutcome(gpus: readonly EmulatedGpu[], durationSeconds: number): BurnInOutcome {
  const failed = gpus.filter((g) => g.latentFault).map((g) => g.index);
  const findings: BurnInFinding[] = gpus.map((g) =>
    g.latentFault ? { gpuIndex: g.index, result: 'fail', detail: LATENT_DETAIL } : { gpuIndex: g.index, result: 'pass', detail: 'all tests passed' },
  );
  const message = formatBurnInFindings(findings);
  if (failed.length === 0) return { termination: { exitCode: 0, reason: 'Completed', message }, failed };
  return { failAtSeconds: durationSeconds * BURN_IN_FINDS_LATENT_AT, termination: { exitCode: 1, reason: 'Error', message }, failed };
}

/** The Event message: which GPUs of the node failed the diagnostic. */
export function burnInFailedMessage(nodeName: string, failed: readonly number[], podName: string): string {
  return `GPU diagnostic under load failed on GPU ${failed.join(', ')} of node ${nodeName} (burn-in pod ${podName}): ${LATENT_DETAIL}`;
}
