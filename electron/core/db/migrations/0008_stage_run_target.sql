-- 0008: a stage run names what it ran on (a host's name, several, or "(local)") in its own row, so
-- the name survives the host being removed and no reader has to guess from the stage.
ALTER TABLE stage_runs ADD COLUMN target TEXT;
UPDATE stage_runs
   SET target = COALESCE((SELECT h.name FROM hosts h WHERE h.id = stage_runs.host_id), '(local)');
