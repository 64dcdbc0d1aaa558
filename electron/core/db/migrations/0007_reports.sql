-- 0007: reports. Imported reports (JSON kept as an artifact, read-only) and the review of a
-- session's or an imported report: comments on the session, checks and findings, and decisions.
CREATE TABLE imported_reports (
  id            INTEGER PRIMARY KEY,
  title         TEXT NOT NULL,
  session_id    INTEGER NOT NULL,   -- the id in the database it came from
  generated_at  TEXT NOT NULL,
  report_sha256 TEXT NOT NULL REFERENCES artifacts (sha256),
  imported_at   TEXT NOT NULL
) STRICT;

CREATE TABLE review_comments (
  id         INTEGER PRIMARY KEY,
  session_id INTEGER REFERENCES sessions (id) ON DELETE CASCADE,
  import_id  INTEGER REFERENCES imported_reports (id) ON DELETE CASCADE,
  target     TEXT NOT NULL,
  author     TEXT NOT NULL,
  text       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  CHECK ((session_id IS NULL) <> (import_id IS NULL))
) STRICT;

CREATE TABLE review_decisions (
  id         INTEGER PRIMARY KEY,
  session_id INTEGER REFERENCES sessions (id) ON DELETE CASCADE,
  import_id  INTEGER REFERENCES imported_reports (id) ON DELETE CASCADE,
  decision   TEXT NOT NULL CHECK (decision IN ('approve','changes-requested')),
  by_name    TEXT NOT NULL,
  note       TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  CHECK ((session_id IS NULL) <> (import_id IS NULL))
) STRICT;
