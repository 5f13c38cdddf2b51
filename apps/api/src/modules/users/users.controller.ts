import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { page, ZPageQuery, ZUser, ZUserCreate, type PageQuery, type UserCreate } from '@gantry/contracts';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import type { Principal } from '../../common/principal';
import { Caller } from '../../common/auth.decorators';
import { UsersService } from './users.service';
import { Idempotent } from '../../common/idempotency.interceptor';

@ApiTags('users')
@Controller('v1/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Idempotent()
  @Post()
  @HttpCode(201)
  @Route({
    summary: 'Create a console user (tenant admin; a team admin for its team)',
    body: ZUserCreate,
    ok: ZUser,
    status: 201,
    errors: [400, 401, 403, 404, 409],
  })
  create(@Caller() p: Principal, @Body(new ZodPipe(ZUserCreate)) body: UserCreate) {
    return this.users.create(p, body);
  }

  @Get()
  @Route({ summary: 'List the users the caller can see (its tenant, or its team)', query: ZPageQuery, ok: page(ZUser) })
  list(@Caller() p: Principal, @Query(new ZodPipe(ZPageQuery, 'query')) q: PageQuery) {
    return this.users.list(p, q);
  }
}
