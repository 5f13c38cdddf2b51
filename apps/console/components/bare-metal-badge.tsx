import type { NodeBareMetal } from '@gantry/contracts';
import { useTeam } from '@/lib/team';

/**
 * A node held by a bare-metal lease (docs/bare-metal.md): "bare metal: <step>" and the lease's team
 * for callers who may see the lease; everyone else sees only "bare metal".
 */
export function BareMetalBadge({ bareMetal }: { bareMetal: NodeBareMetal | null | undefined }) {
  const { teamName } = useTeam();
  if (!bareMetal) return null;
  const mine = bareMetal.teamId !== undefined;
  return (
    <span
      className="pill pill-info"
      data-testid="node-bare-metal"
      data-state={mine ? bareMetal.state : undefined}
      title={mine ? `lease ${bareMetal.leaseName ?? bareMetal.leaseId}` : 'held by a bare-metal lease of another tenant'}
    >
      {mine ? `bare metal: ${bareMetal.state} · ${teamName(bareMetal.teamId!)}` : 'bare metal'}
    </span>
  );
}
