-- (The trigger function's body spells its semicolons \073: Prisma's migration runner over the pg
-- adapter splits a script at every semicolon.)
-- Each node's last heartbeat in a table of its own. The health monitor writes it for every node
-- every few seconds. As a column of "Node", each flush rewrote every node row: in a 10,000-node
-- run the table held about twenty times more dead rows than live ones (every read of "Node"
-- scanned them), and the statement fired the cluster change log's trigger over two transition
-- tables of every node, only to find that nothing but the heartbeat had changed (6,000 nodes:
-- 1.8 s a flush, 0.7 s of it the trigger, measured at load average 17).
CREATE TABLE "NodeHeartbeat" (
    "nodeId" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "NodeHeartbeat_pkey" PRIMARY KEY ("nodeId")
);

ALTER TABLE "NodeHeartbeat" ADD CONSTRAINT "NodeHeartbeat_nodeId_fkey" FOREIGN KEY ("nodeId") REFERENCES "Node"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "NodeHeartbeat" ("nodeId", "at") SELECT "id", "heartbeatAt" FROM "Node" WHERE "heartbeatAt" IS NOT NULL;

ALTER TABLE "Node" DROP COLUMN "heartbeatAt";

-- Node: every change of a row is a change of the snapshot now (no heartbeat column to leave out).
CREATE OR REPLACE FUNCTION cluster_change_node() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF TG_OP = ''INSERT'' THEN
    INSERT INTO "ClusterChange" ("nodeId") SELECT DISTINCT n.id FROM new_rows n\073
  ELSIF TG_OP = ''DELETE'' THEN
    INSERT INTO "ClusterChange" ("nodeId") SELECT DISTINCT o.id FROM old_rows o\073
  ELSE
    INSERT INTO "ClusterChange" ("nodeId")
      SELECT DISTINCT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n IS DISTINCT FROM o\073
  END IF\073
  RETURN NULL\073
END
';
