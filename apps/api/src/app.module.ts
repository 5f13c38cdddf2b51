import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from './config/config';
import { ErrorEnvelopeFilter } from './common/error.filter';
import { IdempotencyInterceptor } from './common/idempotency.interceptor';
import { IdempotencyRepository } from './common/idempotency.repository';
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
import { TeamJobsController } from './modules/jobs/team-jobs.controller';
import { SchedulesController } from './modules/schedules/schedules.controller';
import { SchedulesService } from './modules/schedules/schedules.service';
import { SchedulesRepository } from './modules/schedules/schedules.repository';
import { SchedulesProcessor } from './worker/schedules.processor';
import { SchedulesScheduler } from './worker/schedules.scheduler';
import { BareMetalController } from './modules/bare-metal/bare-metal.controller';
import { BareMetalService } from './modules/bare-metal/bare-metal.service';
import { BareMetalLeasesRepository } from './modules/bare-metal/bare-metal-leases.repository';
import { BareMetalNodesRepository } from './modules/bare-metal/bare-metal-nodes.repository';
import { BareMetalProvisioner } from './modules/bare-metal/bare-metal-provisioner.service';
import { BareMetalProcessor } from './worker/bare-metal.processor';
import { BareMetalScheduler } from './worker/bare-metal.scheduler';
import { ReservationsController } from './modules/reservations/reservations.controller';
import { ReservationsService } from './modules/reservations/reservations.service';
import { ReservationsRepository } from './modules/reservations/reservations.repository';
import { ReservationHoldsService } from './modules/reservations/reservation-holds.service';
import { ReservationsProcessor } from './worker/reservations.processor';
import { ReservationsScheduler } from './worker/reservations.scheduler';
import { PlannerController } from './modules/planner/planner.controller';
import { PlannerService } from './modules/planner/planner.service';
import { PlannerRepository } from './modules/planner/planner.repository';
import { PlannerProcessor } from './worker/planner.processor';
import { JobsService } from './modules/jobs/jobs.service';
import { QueuePositions } from './modules/jobs/queue-positions.service';
import { FairShareRepository } from './modules/fair-share/fair-share.repository';
import { FairShareService } from './modules/fair-share/fair-share.service';
import { FairnessController } from './modules/jobs/fairness.controller';
import { FairnessService } from './modules/jobs/fairness.service';
import { JobsRepository } from './modules/jobs/jobs.repository';
import { JobRequestValidator } from './modules/jobs/job-request.validator';
import { ClusterController } from './modules/cluster/cluster.controller';
import { ClusterService } from './modules/cluster/cluster.service';
import { TimelineRepository } from './modules/events/timeline.repository';
import { ClusterRepository } from './modules/cluster/cluster.repository';
import { ForeignGpuUse } from './modules/cluster/foreign-gpu-use.store';
import { SchedulingRepository } from './modules/scheduling/scheduling.repository';
import { SchedulingService } from './modules/scheduling/scheduling.service';
import { ClusterSnapshotStore } from './modules/cluster/cluster-snapshot.store';
import { LifecycleRepository } from './modules/lifecycle/lifecycle.repository';
import { LifecycleService } from './modules/lifecycle/lifecycle.service';
import { driverProvider } from './driver/driver.provider';
import { ScheduleProcessor } from './worker/schedule.processor';
import { LifecycleProcessor } from './worker/lifecycle.processor';
import { QUEUE_PROCESSORS, type QueueProcessor } from './worker/processor';
import { WorkerHost } from './worker/worker.host';
import { CycleActivity } from './common/cycle-activity.store';
import { Reconciler } from './worker/reconciler.service';
import { ExitBatcher } from './modules/lifecycle/exit-batcher.service';
import { QuotasController } from './modules/quotas/quotas.controller';
import { QuotasService } from './modules/quotas/quotas.service';
import { QuotasRepository } from './modules/quotas/quotas.repository';
import { AuthController } from './modules/auth/auth.controller';
import { SessionsService } from './modules/auth/sessions.service';
import { SessionsRepository } from './modules/auth/sessions.repository';
import { RateLimiter } from './modules/auth/rate-limiter.service';
import { CredentialRevocations } from './common/credential-revocations.service';
import { ChangeEpoch } from './common/change-epoch.service';
import { CredentialCheck } from './modules/auth/credential-check.service';
import { UsersController } from './modules/users/users.controller';
import { UsersService } from './modules/users/users.service';
import { UsersRepository } from './modules/users/users.repository';
import { AuditController } from './modules/audit/audit.controller';
import { AuditRepository } from './modules/audit/audit.repository';
import { AuditInterceptor } from './modules/audit/audit.interceptor';
import { AuditSubjectsRepository } from './modules/audit/audit-subjects.repository';
import { EndpointsController, SimTrafficController } from './modules/endpoints/endpoints.controller';
import { EndpointsService } from './modules/endpoints/endpoints.service';
import { EndpointsRepository } from './modules/endpoints/endpoints.repository';
import { EndpointTraffic } from './modules/endpoints/endpoint-traffic.service';
import { ReplicaReadiness } from './modules/endpoints/replica-readiness.service';
import { EndpointReplicasRepository } from './modules/endpoints/endpoint-replicas.repository';
import { EndpointWorkSource } from './modules/endpoints/endpoint-work.source';
import { AutoscalerService } from './modules/endpoints/autoscaler.service';
import { AutoscaleProcessor } from './worker/autoscale.processor';
import { AutoscaleScheduler } from './worker/autoscale.scheduler';
import { NodeManagerController } from './modules/node-manager/node-manager.controller';
import { NodeManagerService } from './modules/node-manager/node-manager.service';
import { NodesRepository } from './modules/node-manager/nodes.repository';
import { NodeJobsRepository } from './modules/node-manager/node-jobs.repository';
import { IncidentsRepository } from './modules/node-manager/incidents.repository';
import { MigChangesRepository } from './modules/node-manager/mig-changes.repository';
import { HeartbeatsRepository } from './modules/node-manager/heartbeats.repository';
import { DemandRepository } from './modules/node-manager/demand.repository';
import { MigManagerService } from './modules/node-manager/mig-manager.service';
import { PersonaService } from './modules/node-manager/persona.service';
import { NodeManagerLoop } from './modules/node-manager/node-manager.loop';
import { MigReconciler } from './modules/node-manager/mig-reconciler.service';
import { StartRefusals } from './modules/node-manager/start-refusals.service';
import { FailoverService } from './modules/failover/failover.service';
import { BurnInService } from './modules/failover/burn-in.service';
import { JobMover } from './modules/node-manager/job-mover.service';
import { HealthMonitor } from './modules/failover/health.monitor';
import { MigProcessor } from './worker/mig.processor';
import { PersonaProcessor } from './worker/persona.processor';
import { PowerProcessor } from './worker/power.processor';
import { PowerService } from './modules/node-manager/power.service';
import { PowerRepository } from './modules/node-manager/power.repository';
import { FailoverProcessor } from './worker/failover.processor';
import { CLUSTER_DRIVER, type ClusterDriver } from './driver/driver.provider';
import { TelemetryRepository } from './modules/telemetry/telemetry.repository';
import { TelemetryService } from './modules/telemetry/telemetry.service';
import { DemoHistoryRepository } from './modules/demo-history/demo-history.repository';
import { DemoHistoryService } from './modules/demo-history/demo-history.service';
import { DemoHistoryScheduler } from './modules/demo-history/demo-history.scheduler';
import { TelemetryProcessor } from './worker/telemetry.processor';
import { LogsProcessor } from './worker/logs.processor';
import { LogsScheduler } from './worker/logs.scheduler';
import { JobLogsController } from './modules/job-logs/job-logs.controller';
import { JobLogsService } from './modules/job-logs/job-logs.service';
import { JobLogsRepository } from './modules/job-logs/job-logs.repository';
import { JobLogCollector } from './modules/job-logs/job-log-collector.service';
import { TelemetryScheduler } from './worker/telemetry.scheduler';
import { UtilizationController } from './modules/utilization/utilization.controller';
import { UtilizationService } from './modules/utilization/utilization.service';
import { UtilizationRepository } from './modules/utilization/utilization.repository';
import { MetricsController } from './modules/metrics/metrics.controller';
import { IntegrityController } from './modules/integrity/integrity.controller';
import { IntegrityMonitor } from './modules/integrity/integrity.monitor';
import { IntegrityRepository } from './modules/integrity/integrity.repository';
import { IntegrityService } from './modules/integrity/integrity.service';
import { IntegrityStore } from './modules/integrity/integrity.store';
import { MetricsService } from './modules/metrics/metrics.service';
import { MetricsRepository } from './modules/metrics/metrics.repository';
import { MetricsRecorder } from './modules/metrics/metrics.recorder';
import { EventsStreamController } from './modules/events/events-stream.controller';
import { EventsStreamService } from './modules/events/events-stream.service';
import { EventsFeedRepository } from './modules/events/events-feed.repository';
import { EventsPublisher } from './modules/events/events.publisher';

/** What both modes share: config, Postgres, Redis, queue producers. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        PrismaService,
        RedisService,
        QueuesService,
        EventsRepository,
        ClusterRepository,
        ForeignGpuUse,
        MetricsRecorder,
        ChangeEpoch,
      ],
      exports: [APP_CONFIG, PrismaService, RedisService, QueuesService, EventsRepository, ClusterRepository, ForeignGpuUse, MetricsRecorder, ChangeEpoch],
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
      controllers: [
        HealthController,
        TenantsController,
        ApiKeysController,
        JobsController,
        JobLogsController,
        TeamJobsController,
        FairnessController,
        SchedulesController,
        ClusterController,
        NodeManagerController,
        UtilizationController,
        MetricsController,
        IntegrityController,
        EventsStreamController,
        EndpointsController,
        SimTrafficController,
        QuotasController,
        AuthController,
        UsersController,
        AuditController,
        PlannerController,
        BareMetalController,
        ReservationsController,
      ],
      providers: [
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_FILTER, useClass: ErrorEnvelopeFilter },
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
        { provide: APP_INTERCEPTOR, useClass: AuditInterceptor },
        IdempotencyRepository,
        AuthService,
        SessionsService,
        SessionsRepository,
        RateLimiter,
        CredentialRevocations,
        CredentialCheck,
        QuotasService,
        QuotasRepository,
        UsersService,
        UsersRepository,
        AuditRepository,
        AuditSubjectsRepository,
        ApiKeysRepository,
        ApiKeysService,
        HealthService,
        HealthRepository,
        TenantsService,
        TenantsRepository,
        JobsService,
        QueuePositions,
        JobsRepository,
        JobLogsService,
        JobLogsRepository,
        JobRequestValidator,
        FairShareRepository,
        FairShareService,
        FairnessService,
        SchedulesService,
        SchedulesRepository,
        EndpointsService,
        EndpointsRepository,
        EndpointTraffic,
        ReplicaReadiness,
        ClusterService,
        TimelineRepository,
        NodeManagerService,
        NodesRepository,
        PowerRepository,
        IncidentsRepository,
        MigChangesRepository,
        UtilizationService,
        UtilizationRepository,
        MetricsService,
        MetricsRepository,
        IntegrityService,
        IntegrityRepository,
        IntegrityStore,
        EventsStreamService,
        PlannerService,
        PlannerRepository,
        BareMetalService,
        BareMetalLeasesRepository,
        BareMetalNodesRepository,
        ReservationsService,
        ReservationsRepository,
      ],
    };
  }
}

/** `worker` mode: queue processors, the scheduling cycle and the cluster driver. */
@Module({})
export class WorkerModule {
  /** `overrides.driver`: a cluster driver built by the caller (benchmarks: a 1,000-node cluster, zero delays). */
  static forRoot(config: AppConfig, overrides: { driver?: ClusterDriver } = {}): DynamicModule {
    return {
      module: WorkerModule,
      imports: [CoreModule.forRoot(config)],
      providers: [
        overrides.driver ? { provide: CLUSTER_DRIVER, useValue: overrides.driver } : driverProvider,
        NodesRepository,
        NodeJobsRepository,
        IncidentsRepository,
        MigChangesRepository,
        HeartbeatsRepository,
        DemandRepository,
        JobMover,
        FailoverService,
        BurnInService,
        MigManagerService,
        MigReconciler,
        StartRefusals,
        PersonaService,
        PowerRepository,
        PowerService,
        PowerProcessor,
        HealthMonitor,
        IntegrityRepository,
        IntegrityStore,
        IntegrityService,
        IntegrityMonitor,
        NodeManagerLoop,
        MigProcessor,
        PersonaProcessor,
        FailoverProcessor,
        SchedulingRepository,
        ClusterSnapshotStore,
        SchedulingService,
        EndpointReplicasRepository,
        EndpointTraffic,
        ReplicaReadiness,
        EndpointWorkSource,
        AutoscalerService,
        AutoscaleProcessor,
        AutoscaleScheduler,
        LifecycleRepository,
        LifecycleService,
        ScheduleProcessor,
        LifecycleProcessor,
        TelemetryRepository,
        TelemetryService,
        TelemetryProcessor,
        DemoHistoryRepository,
        DemoHistoryService,
        DemoHistoryScheduler,
        TelemetryScheduler,
        JobLogsRepository,
        JobLogCollector,
        LogsProcessor,
        LogsScheduler,
        TenantsRepository,
        JobsRepository,
        JobRequestValidator,
        QuotasRepository,
        JobsService,
        QueuePositions,
        FairShareRepository,
        FairShareService,
        SchedulesRepository,
        SchedulesService,
        SchedulesProcessor,
        SchedulesScheduler,
        ReservationsRepository,
        ReservationHoldsService,
        ReservationsProcessor,
        ReservationsScheduler,
        PlannerService,
        PlannerRepository,
        PlannerProcessor,
        BareMetalNodesRepository,
        BareMetalProvisioner,
        BareMetalProcessor,
        BareMetalScheduler,
        EventsFeedRepository,
        EventsPublisher,
        {
          provide: QUEUE_PROCESSORS,
          inject: [
            ScheduleProcessor,
            LifecycleProcessor,
            TelemetryProcessor,
            MigProcessor,
            PersonaProcessor,
            PowerProcessor,
            FailoverProcessor,
            AutoscaleProcessor,
            SchedulesProcessor,
            ReservationsProcessor,
            PlannerProcessor,
            BareMetalProcessor,
            LogsProcessor,
          ],
          useFactory: (...processors: QueueProcessor[]) => processors,
        },
        WorkerHost,
        CycleActivity,
        Reconciler,
        ExitBatcher,
      ],
    };
  }
}
