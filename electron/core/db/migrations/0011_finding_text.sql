-- 0011: a finding keeps its message and fix as i18n keys with their values (JSON), so a stored
-- scan reads in whichever language is chosen later; `message` stays the scan language's text.
ALTER TABLE findings ADD COLUMN text TEXT;
