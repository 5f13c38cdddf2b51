import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { page, ZApiKey, ZApiKeyCreate, ZApiKeyCreated, ZPageQuery, type PageQuery } from '@gantry/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { NoBody } from '../../common/no-body.interceptor';
import type { Principal } from '../../common/principal';
import { Caller } from '../../common/auth.decorators';
import { ApiKeysService } from './api-keys.service';

@ApiTags('api-keys')
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @HttpCode(201)
  @Route({
    summary: 'Create an API key; the secret is in the answer, this once',
    body: ZApiKeyCreate,
    ok: ZApiKeyCreated,
    status: 201,
    errors: [400, 401, 403, 404],
  })
  create(@Caller() p: Principal, @Body(new ZodPipe(ZApiKeyCreate)) body: z.output<typeof ZApiKeyCreate>) {
    return this.keys.create(p, body);
  }

  @Get()
  @Route({ summary: 'List API keys (prefix, scopes, last use; never the secret)', query: ZPageQuery, ok: page(ZApiKey) })
  list(@Caller() p: Principal, @Query(new ZodPipe(ZPageQuery, 'query')) q: PageQuery) {
    return this.keys.list(p, q);
  }

  @Delete(':id')
  @NoBody()
  @HttpCode(204)
  @Route({ summary: 'Revoke an API key; it is refused at once', status: 204, errors: [400, 401, 403, 404, 409] })
  async revoke(@Caller() p: Principal, @Param('id') id: string): Promise<void> {
    await this.keys.revoke(p, id);
  }
}
