-- 0009: precision runs (baseline host against target host, or an imported msprobe output) and
-- their per-module comparison in execution order. The raw dumps of both sides are artifacts.
CREATE TABLE precision_runs (
  stage_run_id         INTEGER PRIMARY KEY REFERENCES stage_runs (id) ON DELETE CASCADE,
  source               TEXT NOT NULL CHECK (source IN ('run', 'import')),
  baseline             TEXT NOT NULL,
  entry                TEXT NOT NULL,
  dtype                TEXT NOT NULL,
  mode                 TEXT NOT NULL,
  backward             INTEGER NOT NULL DEFAULT 0,
  -- sha256 of the weights and inputs the two sides shared
  inputs_sha256        TEXT,
  baseline_snapshot_id INTEGER,
  target_snapshot_id   INTEGER,
  baseline_dump_sha256 TEXT REFERENCES artifacts (sha256),
  target_dump_sha256   TEXT REFERENCES artifacts (sha256),
  first_divergence     TEXT,
  n_pass               INTEGER NOT NULL DEFAULT 0,
  n_warning            INTEGER NOT NULL DEFAULT 0,
  n_error              INTEGER NOT NULL DEFAULT 0,
  -- JSON: [{key, params}] files, modules or columns an import could not read
  problems             TEXT NOT NULL DEFAULT '[]',
  unmatched            TEXT NOT NULL DEFAULT '[]',
  created_at           TEXT NOT NULL
) STRICT;

CREATE TABLE precision_modules (
  stage_run_id  INTEGER NOT NULL REFERENCES precision_runs (stage_run_id) ON DELETE CASCADE,
  ord           INTEGER NOT NULL,
  module        TEXT NOT NULL,
  cls           TEXT,
  source        TEXT,
  kind          TEXT NOT NULL,
  result        TEXT NOT NULL,
  reason        TEXT,
  cosine        REAL,
  max_abs_err   REAL,
  max_rel_err   REAL,
  mean_rel_err  REAL,
  one_ratio     REAL,
  five_ratio    REAL,
  stat_drift    REAL,
  baseline      TEXT,
  target        TEXT,
  PRIMARY KEY (stage_run_id, ord)
) STRICT;
