-- 0001: the tables the workbench can foresee. Later capabilities add theirs in new files;
-- a shipped migration is never edited (the runner refuses a changed checksum).

CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  sha256     TEXT NOT NULL,
  applied_at TEXT NOT NULL
) STRICT;

CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL -- JSON
) STRICT;

CREATE TABLE jobs (
  id          TEXT PRIMARY KEY,
  kind        TEXT NOT NULL,
  params      TEXT NOT NULL DEFAULT '{}',
  status      TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed','cancelled','interrupted')),
  progress    REAL CHECK (progress IS NULL OR (progress >= 0 AND progress <= 1)),
  message     TEXT,           -- JSON {key, params}
  result      TEXT,           -- JSON
  error       TEXT,           -- JSON {code, message, detail}
  created_at  TEXT NOT NULL,
  started_at  TEXT,
  finished_at TEXT,
  owner_pid   INTEGER         -- process that runs it; a dead owner means the job was interrupted
) STRICT;
CREATE INDEX jobs_created ON jobs (created_at DESC);

CREATE TABLE hosts (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE,
  hostname      TEXT NOT NULL,
  port          INTEGER NOT NULL DEFAULT 22 CHECK (port BETWEEN 1 AND 65535),
  username      TEXT,
  identity_file TEXT,
  jump_host_id  INTEGER REFERENCES hosts (id) ON DELETE RESTRICT,
  group_name    TEXT,
  tags          TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
  source        TEXT NOT NULL DEFAULT 'manual' CHECK (source IN ('manual','ssh_config')),
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
) STRICT;

CREATE TABLE inventories (
  id       INTEGER PRIMARY KEY,
  host_id  INTEGER NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  taken_at TEXT NOT NULL,
  data     TEXT NOT NULL,               -- JSON snapshot
  warnings TEXT NOT NULL DEFAULT '[]'   -- JSON array
) STRICT;
CREATE INDEX inventories_host ON inventories (host_id, taken_at DESC);

CREATE TABLE projects (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE,
  code_location TEXT,                      -- local folder or host:path
  target_hosts  TEXT NOT NULL DEFAULT '[]', -- JSON array of host ids
  baseline      TEXT,                      -- JSON GPU baseline facts
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
  id          INTEGER PRIMARY KEY,
  project_id  INTEGER REFERENCES projects (id) ON DELETE CASCADE,
  title       TEXT,
  code_commit TEXT,
  status      TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','closed')),
  created_at  TEXT NOT NULL,
  closed_at   TEXT
) STRICT;
CREATE INDEX sessions_project ON sessions (project_id, created_at DESC);

CREATE TABLE artifacts (
  sha256     TEXT PRIMARY KEY CHECK (length(sha256) = 64),
  kind       TEXT NOT NULL,
  size       INTEGER NOT NULL CHECK (size >= 0),
  media_type TEXT,
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE stage_runs (
  id          INTEGER PRIMARY KEY,
  session_id  INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  stage       TEXT NOT NULL,
  host_id     INTEGER REFERENCES hosts (id) ON DELETE SET NULL,
  status      TEXT NOT NULL CHECK (status IN ('running','pass','warn','fail','error','cancelled','interrupted')),
  job_id      TEXT REFERENCES jobs (id) ON DELETE SET NULL,
  started_at  TEXT NOT NULL,
  finished_at TEXT
) STRICT;
CREATE INDEX stage_runs_session ON stage_runs (session_id, stage);

CREATE TABLE check_results (
  id              INTEGER PRIMARY KEY,
  stage_run_id    INTEGER NOT NULL REFERENCES stage_runs (id) ON DELETE CASCADE,
  check_id        TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('pass','warn','fail','skip','error')),
  summary         TEXT NOT NULL,
  evidence        TEXT,   -- JSON, small evidence inline
  remediation     TEXT,
  artifact_sha256 TEXT REFERENCES artifacts (sha256),
  created_at      TEXT NOT NULL,
  UNIQUE (stage_run_id, check_id)
) STRICT;

CREATE TABLE waivers (
  id         INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  check_id   TEXT NOT NULL,
  host_id    INTEGER REFERENCES hosts (id) ON DELETE CASCADE,
  reason     TEXT NOT NULL CHECK (length(trim(reason)) > 0),
  waived_by  TEXT NOT NULL CHECK (length(trim(waived_by)) > 0),
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE findings (
  id         INTEGER PRIMARY KEY,
  session_id INTEGER REFERENCES sessions (id) ON DELETE CASCADE,
  file       TEXT NOT NULL,
  line       INTEGER NOT NULL,
  col        INTEGER NOT NULL,
  end_line   INTEGER,
  end_col    INTEGER,
  rule_id    TEXT NOT NULL,
  severity   TEXT NOT NULL CHECK (severity IN ('error','warning','info')),
  category   TEXT NOT NULL,
  message    TEXT NOT NULL,
  fix        TEXT,          -- JSON edit
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX findings_session ON findings (session_id, file);

CREATE TABLE audit_log (
  id     INTEGER PRIMARY KEY,
  at     TEXT NOT NULL,
  actor  TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT,
  detail TEXT NOT NULL DEFAULT '{}'
) STRICT;
