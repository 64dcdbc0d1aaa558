-- 0015: a waiver names what the waived run ran on, as the run does (0008): one host, several
-- ("a,b" for the distributed and profiling stages), "(local)" for the code stage, or an import's
-- source: waivers of every stage become possible. Like runs, waivers outlive a removed host
-- (its id no longer deletes them).
ALTER TABLE waivers ADD COLUMN target TEXT;
UPDATE waivers
   SET target = COALESCE((SELECT h.name FROM hosts h WHERE h.id = waivers.host_id), '(local)'),
       host_id = NULL;
