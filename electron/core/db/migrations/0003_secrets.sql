-- 0003: secrets a user asked the desktop app to remember, encrypted by the OS keychain
-- (Electron safeStorage) before they reach this table. Serve mode and the CLI never write here.
CREATE TABLE secrets (
  host_id    INTEGER PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
  kind       TEXT NOT NULL CHECK (kind IN ('password')),
  cipher     BLOB NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
