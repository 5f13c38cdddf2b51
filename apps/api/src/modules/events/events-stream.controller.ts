import { Controller, Sse } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Observable } from 'rxjs';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { EventsStreamService, type SseMessage } from './events-stream.service';

@ApiTags('observability')
@Controller('v1')
export class EventsStreamController {
  constructor(private readonly events: EventsStreamService) {}

  @Sse('events/stream')
  @RequireScopes('jobs:read')
  @ApiOperation({ summary: 'Live events (SSE): jobs, nodes and incidents as they happen; event types job, node, incident, other, ready, ping' })
  @ApiProduces('text/event-stream')
  @ApiSecurity('apiKey')
  stream(@Caller() p: Principal): Observable<SseMessage> {
    return this.events.stream(p);
  }
}
