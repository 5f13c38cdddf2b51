import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from './config/config';
import { ErrorEnvelopeFilter } from './common/error.filter';
import { PrismaService } from './common/prisma.service';
import { RedisService } from './common/redis.service';
import { QueuesService } from './queues/queues.service';
import { EventsRepository } from './modules/events/events.repository';
import { AuthGuard } from './modules/auth/auth.guard';
import { AuthService } from './modules/auth/auth.service';
import { HealthController } from './modules/health/health.controller';
import { HealthService } from './modules/health/health.service';
import { HealthRepository } from './modules/health/health.repository';
import { ApiKeysController } from './modules/api-keys/api-keys.controller';
import { ApiKeysService } from './modules/api-keys/api-keys.service';
import { ApiKeysRepository } from './modules/api-keys/api-keys.repository';
import { TenantsController } from './modules/tenants/tenants.controller';
import { TenantsService } from './modules/tenants/tenants.service';
import { TenantsRepository } from './modules/tenants/tenants.repository';
import { JobsController } from './modules/jobs/jobs.controller';
import { JobsService } from './modules/jobs/jobs.service';
import { JobsRepository } from './modules/jobs/jobs.repository';
import { JobRequestValidator } from './modules/jobs/job-request.validator';
import { ClusterController } from './modules/cluster/cluster.controller';
import { ClusterService } from './modules/cluster/cluster.service';
import { ClusterRepository } from './modules/cluster/cluster.repository';
import { SchedulingRepository } from './modules/scheduling/scheduling.repository';
import { SchedulingService } from './modules/scheduling/scheduling.service';
import { LifecycleRepository } from './modules/lifecycle/lifecycle.repository';
import { LifecycleService } from './modules/lifecycle/lifecycle.service';
import { driverProvider } from './driver/driver.provider';
import { ScheduleProcessor } from './queues/schedule.processor';
import { LifecycleProcessor } from './queues/lifecycle.processor';
import { QUEUE_PROCESSORS, type QueueProcessor } from './queues/processor';
import { WorkerHost } from './queues/worker.host';
import { Reconciler } from './queues/reconciler';

/** What both modes share: config, Postgres, Redis, queue producers. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CoreModule,
      providers: [{ provide: APP_CONFIG, useValue: config }, PrismaService, RedisService, QueuesService, EventsRepository, ClusterRepository],
      exports: [APP_CONFIG, PrismaService, RedisService, QueuesService, EventsRepository, ClusterRepository],
    };
  }
}

/** `api` mode: the REST API. */
@Module({})
export class HttpModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: HttpModule,
      imports: [CoreModule.forRoot(config)],
      controllers: [HealthController, TenantsController, ApiKeysController, JobsController, ClusterController],
      providers: [
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: ErrorEnvelopeFilter },
        AuthService,
        ApiKeysRepository,
        ApiKeysService,
        HealthService,
        HealthRepository,
        TenantsService,
        TenantsRepository,
        JobsService,
        JobsRepository,
        JobRequestValidator,
        ClusterService,
      ],
    };
  }
}

/** `worker` mode: queue processors, the scheduling cycle and the cluster driver. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [CoreModule.forRoot(config)],
      providers: [
        driverProvider,
        SchedulingRepository,
        SchedulingService,
        LifecycleRepository,
        LifecycleService,
        ScheduleProcessor,
        LifecycleProcessor,
        {
          provide: QUEUE_PROCESSORS,
          inject: [ScheduleProcessor, LifecycleProcessor],
          useFactory: (...processors: QueueProcessor[]) => processors,
        },
        WorkerHost,
        Reconciler,
      ],
    };
  }
}
