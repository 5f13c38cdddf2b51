-- The live feed's publisher reads the event log in (createdAt, id) order every second, from a few
-- seconds back: without an index on that order each read scanned and sorted the whole table.
CREATE INDEX "Event_createdAt_id_idx" ON "Event"("createdAt", "id");
