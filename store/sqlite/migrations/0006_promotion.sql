-- 0006: eval-gated promotion (store/learning.go). A version is either
-- promoted (it passed the retention check and was served) or rejected (it
-- regressed; its samples stay trained, never trained again). serving says
-- which version the engine must serve: the newest promoted one, unless a
-- person asked for another with `clawrl versions promote|rollback N`; that
-- request waits in serving_requests until the train loop carries it out by
-- recording a copy of N as a new version (policy versions only grow).
-- Versions recorded before this step were all served: 'promoted'.

ALTER TABLE versions ADD COLUMN status TEXT NOT NULL DEFAULT 'promoted';
ALTER TABLE versions ADD COLUMN status_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE versions ADD COLUMN source_version INTEGER NOT NULL DEFAULT 0;

CREATE TABLE serving_requests (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    version      INTEGER NOT NULL,
    action       TEXT    NOT NULL,   -- promote | rollback
    requested_at INTEGER NOT NULL,
    done_at      INTEGER NOT NULL DEFAULT 0,   -- 0 while pending
    result       TEXT    NOT NULL DEFAULT ''
);
