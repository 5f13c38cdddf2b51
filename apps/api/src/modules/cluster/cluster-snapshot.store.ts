import { Injectable, Logger } from '@nestjs/common';
import { ClusterRepository } from './cluster.repository';
import { IncrementalSnapshot } from './incremental-snapshot';

/** The worker's one cluster snapshot, kept between scheduling cycles (IncrementalSnapshot over Postgres). */
@Injectable()
export class ClusterSnapshotStore extends IncrementalSnapshot {
  private static readonly logger = new Logger('snapshot');

  constructor(cluster: ClusterRepository) {
    super(cluster, undefined, undefined, (e) => ClusterSnapshotStore.logger.warn(`snapshot reload or prune failed: ${(e as Error).message}`));
  }
}
