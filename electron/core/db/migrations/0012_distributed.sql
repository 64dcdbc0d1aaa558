-- 0012: what a distributed (HCCL) run found beyond its check results: each host's facts, the
-- values that disagree, the rank table checked or generated, the collective's result and logs.
-- The document is an artifact (it grows with the fleet: 128 hosts x 16 NPUs); the row says
-- which, and how many hosts answered, for lists that need no artifact read.
CREATE TABLE distributed_runs (
  stage_run_id   INTEGER PRIMARY KEY REFERENCES stage_runs (id) ON DELETE CASCADE,
  hosts          INTEGER NOT NULL,
  answered       INTEGER NOT NULL,
  collective_ok  INTEGER CHECK (collective_ok IN (0, 1)),
  result_sha256  TEXT NOT NULL REFERENCES artifacts (sha256),
  created_at     TEXT NOT NULL
) STRICT;
