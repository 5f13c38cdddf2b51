/**
 * Compile-time check that the SDK's types (from @gantry/contracts) and the committed OpenAPI
 * document say the same thing. When the API changes a shape and the document is regenerated,
 * this file stops compiling until the contracts agree. Nothing here runs.
 */
import type { Capacity, Gpu, Job, JobCreate, JobDetail, Me, Node, NodeDetail, Page, Team, Tenant } from '@gantry/contracts';
import type { RequestOf, ResponseOf } from './openapi-types';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(_: T) => undefined;

same<Same<ResponseOf<'/v1/jobs/{id}', 'get'>, JobDetail>>(true);
same<Same<ResponseOf<'/v1/jobs', 'get'>, Page<Job>>>(true);
same<Same<ResponseOf<'/v1/jobs', 'post'>, Job>>(true);
same<Same<ResponseOf<'/v1/me', 'get'>, Me>>(true);
same<Same<ResponseOf<'/v1/nodes', 'get'>, Page<Node>>>(true);
same<Same<ResponseOf<'/v1/nodes/{id}', 'get'>, NodeDetail>>(true);
same<Same<ResponseOf<'/v1/gpus', 'get'>, Page<Gpu>>>(true);
same<Same<ResponseOf<'/v1/utilization', 'get'>, Capacity>>(true);
same<Same<ResponseOf<'/v1/tenants/{id}', 'get'>, Tenant>>(true);
same<Same<ResponseOf<'/v1/teams/{id}', 'get'>, Team>>(true);
same<RequestOf<'/v1/jobs', 'post'> extends object ? (JobCreate extends RequestOf<'/v1/jobs', 'post'> ? true : false) : false>(true);
