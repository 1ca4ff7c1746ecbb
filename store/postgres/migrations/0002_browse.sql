-- 0002: what the dashboard (ui/, store.Browser) lists and pages through, as
-- store/sqlite's 0005: the client software of a session, and the indexes
-- the session list (by last activity, keyset (last_seen, id)) and the
-- throughput counts (by time) read.

ALTER TABLE sessions ADD COLUMN client TEXT NOT NULL DEFAULT '';

CREATE INDEX sessions_by_activity ON sessions (last_seen, id);
CREATE INDEX judgments_by_time ON judgments (created_at);
CREATE INDEX samples_by_time ON samples (created_at);
CREATE INDEX turns_by_session_type ON turns (session_id, type);
