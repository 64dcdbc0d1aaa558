-- 0002: keep the raw probe output of each inventory as evidence (an artifact), so a snapshot can
-- be re-read with a newer parser.
ALTER TABLE inventories ADD COLUMN raw_sha256 TEXT REFERENCES artifacts (sha256);
