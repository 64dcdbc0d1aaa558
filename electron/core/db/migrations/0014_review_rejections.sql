-- 0014: the changes a review rejected one by one, by their original lines (`12:14`, `30:0` for
-- lines added after line 30), so a file reopened later still shows them rejected, not undecided.
ALTER TABLE code_files ADD COLUMN rejected TEXT NOT NULL DEFAULT '[]';
