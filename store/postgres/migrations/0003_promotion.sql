-- 0003: eval-gated promotion, as store/sqlite's 0006_promotion.sql. A version
-- is promoted (passed the retention check; served) or rejected (recorded,
-- never served). serving_requests holds `clawrl versions promote|rollback N`
-- until the train loop records a copy of N as a new version.
ALTER TABLE versions ADD COLUMN status TEXT NOT NULL DEFAULT 'promoted';
ALTER TABLE versions ADD COLUMN status_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE versions ADD COLUMN source_version BIGINT NOT NULL DEFAULT 0;

CREATE TABLE serving_requests (
    id           BIGSERIAL PRIMARY KEY,
    version      BIGINT NOT NULL,
    action       TEXT   NOT NULL,   -- promote | rollback
    requested_at BIGINT NOT NULL,
    done_at      BIGINT NOT NULL DEFAULT 0,   -- 0 while pending
    result       TEXT   NOT NULL DEFAULT ''
);
