-- 0005: what the dashboard (ui/, store.Browser) lists and pages through.
--
-- The session list pages by last activity, newest first, with a keyset
-- cursor (last_seen, id): this index serves it for expired and live
-- sessions alike (sessions_by_last_seen only holds live ones). Throughput
-- counts recent judgments by time. Each costs one index write per insert or
-- touch, nothing per turn.

ALTER TABLE sessions ADD COLUMN client TEXT NOT NULL DEFAULT ''; -- the client software (session.ClientName)

CREATE INDEX sessions_by_activity ON sessions (last_seen, id);
CREATE INDEX judgments_by_time ON judgments (created_at);
CREATE INDEX samples_by_time ON samples (created_at);
-- A session's main and side counts, read from the index alone.
CREATE INDEX turns_by_session_type ON turns (session_id, type);
