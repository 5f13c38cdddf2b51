import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZReservation, ZReservationCreate, ZReservationList, ZReservationListQuery, ZReservationUpdate } from '@gantry/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { NoBody } from '../../common/no-body.interceptor';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { ReservationsService } from './reservations.service';

@ApiTags('reservations')
@Controller('v1')
export class ReservationsController {
  constructor(private readonly reservations: ReservationsService) {}

  @Post('reservations')
  @RequireScopes('quotas:write')
  @Route({
    summary:
      'Reserve GPUs (or whole nodes) of a model for a team for a window, one-off or recurring; 409 naming the conflicting reservations and the window when the model has too few GPUs',
    body: ZReservationCreate,
    ok: ZReservation,
    status: 201,
    errors: [400, 401, 403, 404, 409],
  })
  create(@Caller() p: Principal, @Body(new ZodPipe(ZReservationCreate)) body: z.output<typeof ZReservationCreate>) {
    return this.reservations.create(p, body);
  }

  @Get('reservations')
  @RequireScopes('quotas:read')
  @Route({
    summary: 'Reservations visible to the caller with their windows in a range (default: the next 7 days), and the capacity of their models',
    query: ZReservationListQuery,
    ok: ZReservationList,
    errors: [400, 401, 403, 404],
  })
  list(@Caller() p: Principal, @Query(new ZodPipe(ZReservationListQuery, 'query')) q: z.output<typeof ZReservationListQuery>) {
    return this.reservations.list(p, q);
  }

  @Get('reservations/:id')
  @RequireScopes('quotas:read')
  @Route({ summary: 'One reservation, with its windows in the next 7 days', ok: ZReservation, errors: [401, 403, 404] })
  get(@Caller() p: Principal, @Param('id') id: string) {
    return this.reservations.get(p, id);
  }

  @Patch('reservations/:id')
  @RequireScopes('quotas:write')
  @Route({
    summary:
      'Change a reservation’s name, size (gpus or nodes) or window and recurrence: checked as a create is (capacity without itself, the team’s quota), same permissions',
    body: ZReservationUpdate,
    ok: ZReservation,
    errors: [400, 401, 403, 404, 409],
  })
  update(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZReservationUpdate)) body: z.output<typeof ZReservationUpdate>) {
    return this.reservations.update(p, id, body);
  }

  @Delete('reservations/:id')
  @NoBody()
  @HttpCode(204)
  @RequireScopes('quotas:write')
  @Route({ summary: 'Delete a reservation: its GPUs serve everyone again at the next cycle', status: 204, errors: [400, 401, 403, 404] })
  remove(@Caller() p: Principal, @Param('id') id: string) {
    return this.reservations.remove(p, id);
  }
}
