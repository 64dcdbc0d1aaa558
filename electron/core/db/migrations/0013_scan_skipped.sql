-- 0013: a stored scan keeps the files it left out as not text (NUL bytes): the review lists them,
-- so a binary file named .py is seen, not silently missing from the file tree.
ALTER TABLE code_scans ADD COLUMN skipped TEXT NOT NULL DEFAULT '[]';
