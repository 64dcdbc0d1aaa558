-- 0004: the hosts a session targets (a project's target hosts, or those picked for an ad-hoc one).
ALTER TABLE sessions ADD COLUMN hosts TEXT NOT NULL DEFAULT '[]';
