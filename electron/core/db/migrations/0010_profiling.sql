-- 0010: profiles of the profiling stage (a run on a host, or an imported folder). The analysed
-- result (kernels, steps, advice, warnings) is an artifact; the files gathered from a host are
-- listed with their sha256 (checked against the host's) and kept under <data dir>/profiles/<run>.
CREATE TABLE profiles (
  stage_run_id  INTEGER PRIMARY KEY REFERENCES stage_runs (id) ON DELETE CASCADE,
  source        TEXT NOT NULL,
  kind          TEXT NOT NULL,
  entry         TEXT,
  profiler      TEXT,
  result_sha256 TEXT NOT NULL REFERENCES artifacts (sha256),
  files_dir     TEXT,
  created_at    TEXT NOT NULL
) STRICT;

CREATE TABLE profile_files (
  stage_run_id INTEGER NOT NULL REFERENCES profiles (stage_run_id) ON DELETE CASCADE,
  host         TEXT NOT NULL,
  path         TEXT NOT NULL,
  size         INTEGER NOT NULL,
  sha256       TEXT NOT NULL,
  PRIMARY KEY (stage_run_id, host, path)
) STRICT;
