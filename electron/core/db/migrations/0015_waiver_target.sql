-- 0015: a waiver names what the waived run ran on, as the run does (0008): one host, several
-- ("a,b" for the distributed and profiling stages) or "(local)" for the code stage, which has no
-- host row. Waivers of every stage become possible; the host id stays for the single-host ones.
ALTER TABLE waivers ADD COLUMN target TEXT;
UPDATE waivers
   SET target = COALESCE((SELECT h.name FROM hosts h WHERE h.id = waivers.host_id), '(local)');
