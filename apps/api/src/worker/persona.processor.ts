import { Injectable } from '@nestjs/common';
import { PersonaService } from '../modules/node-manager/persona.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `persona`: switch a node's persona (cordon, drain, reconfigure, ready); operator cordon/uncordon/drain. */
@Injectable()
export class PersonaProcessor implements QueueProcessor {
  readonly queue = 'persona' as const;
  readonly concurrency = 16;

  constructor(private readonly personas: PersonaService) {}

  process(data: unknown): Promise<void> {
    return this.personas.handle(QUEUES.persona.parse(data));
  }
}
