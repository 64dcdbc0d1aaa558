-- 0006: operator traces of the ops stage. The raw trace (every op with shapes, dtypes, modules,
-- sources) is an artifact; classification is computed on read, so any torch_npu version can be
-- asked of an old run.
CREATE TABLE op_traces (
  stage_run_id     INTEGER PRIMARY KEY REFERENCES stage_runs (id) ON DELETE CASCADE,
  entry            TEXT NOT NULL,
  target_torch_npu TEXT NOT NULL,
  trace_sha256     TEXT NOT NULL REFERENCES artifacts (sha256),
  created_at       TEXT NOT NULL
) STRICT;
