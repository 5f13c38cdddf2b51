-- (The trigger functions' bodies spell their semicolons \073: Prisma's migration runner over
-- the pg adapter splits a script at every semicolon.)
-- The cluster change log: which nodes' snapshot rows (the node, its GPUs, MIG slices and
-- allocations) changed, written by statement triggers in the writer's own transaction. The
-- worker keeps the cluster snapshot in memory and re-reads only the nodes named here since its
-- last read (docs/benchmarks-load.md, "The incremental snapshot"). "xid" is the writing
-- transaction's id: a reader that remembers the xmin of its last read's snapshot misses no
-- row, whenever the writer commits.
CREATE TABLE "ClusterChange" (
    "id" BIGSERIAL NOT NULL,
    "xid" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint,
    "nodeId" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT clock_timestamp(),

    CONSTRAINT "ClusterChange_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "ClusterChange_xid_idx" ON "ClusterChange"("xid");

-- Node: any change but the heartbeat (written for every node every few seconds, read by no cycle).
CREATE FUNCTION cluster_change_node() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF TG_OP = ''INSERT'' THEN
    INSERT INTO "ClusterChange" ("nodeId") SELECT DISTINCT n.id FROM new_rows n\073
  ELSIF TG_OP = ''DELETE'' THEN
    INSERT INTO "ClusterChange" ("nodeId") SELECT DISTINCT o.id FROM old_rows o\073
  ELSE
    INSERT INTO "ClusterChange" ("nodeId")
      SELECT DISTINCT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE (to_jsonb(n) - ''heartbeatAt'') IS DISTINCT FROM (to_jsonb(o) - ''heartbeatAt'')\073
  END IF\073
  RETURN NULL\073
END
';

-- Gpu and Allocation: rows that carry their node.
CREATE FUNCTION cluster_change_by_node_id() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF TG_OP = ''INSERT'' THEN
    INSERT INTO "ClusterChange" ("nodeId") SELECT DISTINCT n."nodeId" FROM new_rows n\073
  ELSIF TG_OP = ''DELETE'' THEN
    INSERT INTO "ClusterChange" ("nodeId") SELECT DISTINCT o."nodeId" FROM old_rows o\073
  ELSE
    INSERT INTO "ClusterChange" ("nodeId")
      SELECT DISTINCT x."nodeId" FROM (
        SELECT n."nodeId" FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n IS DISTINCT FROM o
        UNION
        SELECT o."nodeId" FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n."nodeId" IS DISTINCT FROM o."nodeId"
      ) x\073
  END IF\073
  RETURN NULL\073
END
';

-- GpuInstance: the node of its GPU.
CREATE FUNCTION cluster_change_gpu_instance() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF TG_OP = ''INSERT'' THEN
    INSERT INTO "ClusterChange" ("nodeId") SELECT DISTINCT g."nodeId" FROM new_rows n JOIN "Gpu" g ON g.id = n."gpuId"\073
  ELSIF TG_OP = ''DELETE'' THEN
    INSERT INTO "ClusterChange" ("nodeId") SELECT DISTINCT g."nodeId" FROM old_rows o JOIN "Gpu" g ON g.id = o."gpuId"\073
  ELSE
    INSERT INTO "ClusterChange" ("nodeId")
      SELECT DISTINCT g."nodeId" FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN "Gpu" g ON g.id IN (n."gpuId", o."gpuId")
      WHERE n IS DISTINCT FROM o\073
  END IF\073
  RETURN NULL\073
END
';

CREATE TRIGGER "Node_change_insert" AFTER INSERT ON "Node" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_node();
CREATE TRIGGER "Node_change_update" AFTER UPDATE ON "Node" REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_node();
CREATE TRIGGER "Node_change_delete" AFTER DELETE ON "Node" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_node();

CREATE TRIGGER "Gpu_change_insert" AFTER INSERT ON "Gpu" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_by_node_id();
CREATE TRIGGER "Gpu_change_update" AFTER UPDATE ON "Gpu" REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_by_node_id();
CREATE TRIGGER "Gpu_change_delete" AFTER DELETE ON "Gpu" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_by_node_id();

CREATE TRIGGER "Allocation_change_insert" AFTER INSERT ON "Allocation" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_by_node_id();
CREATE TRIGGER "Allocation_change_update" AFTER UPDATE ON "Allocation" REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_by_node_id();
CREATE TRIGGER "Allocation_change_delete" AFTER DELETE ON "Allocation" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_by_node_id();

CREATE TRIGGER "GpuInstance_change_insert" AFTER INSERT ON "GpuInstance" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_gpu_instance();
CREATE TRIGGER "GpuInstance_change_update" AFTER UPDATE ON "GpuInstance" REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_gpu_instance();
CREATE TRIGGER "GpuInstance_change_delete" AFTER DELETE ON "GpuInstance" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cluster_change_gpu_instance();
