-- 0016: the timeline reads a session's taken-back waivers from the audit log by target
-- ("<session>/<check>"); without an index that read scanned the whole log for every timeline.
CREATE INDEX audit_log_action_target ON audit_log (action, target);
