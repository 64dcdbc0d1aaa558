-- 0005: code scans and their review. The original and proposed text of every changed file is kept
-- as an artifact, so the review survives edits on disk and "changed since the scan" can be told.
CREATE TABLE code_scans (
  id           INTEGER PRIMARY KEY,
  session_id   INTEGER REFERENCES sessions (id) ON DELETE CASCADE,
  stage_run_id INTEGER REFERENCES stage_runs (id) ON DELETE SET NULL,
  root         TEXT NOT NULL,
  mode         TEXT NOT NULL CHECK (mode IN ('rewrite','transfer')),
  files        INTEGER NOT NULL,
  lines        INTEGER NOT NULL,
  effort       TEXT NOT NULL,
  warnings     TEXT NOT NULL DEFAULT '[]',
  created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX code_scans_session ON code_scans (session_id);

CREATE TABLE code_files (
  scan_id          INTEGER NOT NULL REFERENCES code_scans (id) ON DELETE CASCADE,
  file             TEXT NOT NULL,
  original_sha256  TEXT NOT NULL REFERENCES artifacts (sha256),
  proposed_sha256  TEXT NOT NULL REFERENCES artifacts (sha256),
  parses           INTEGER NOT NULL,
  review           TEXT NOT NULL DEFAULT 'pending' CHECK (review IN ('pending','accepted','rejected','edited')),
  reviewed_sha256  TEXT REFERENCES artifacts (sha256),
  reviewed_at      TEXT,
  applied_at       TEXT,
  PRIMARY KEY (scan_id, file)
) STRICT;

ALTER TABLE findings ADD COLUMN scan_id INTEGER REFERENCES code_scans (id) ON DELETE CASCADE;
CREATE INDEX findings_scan ON findings (scan_id, file);
