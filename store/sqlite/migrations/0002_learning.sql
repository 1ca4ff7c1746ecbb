-- 0002: the learning loop's rows — judgments, training samples and policy
-- versions (store/learning.go). Each is written in the same transaction as
-- the turn's state change it justifies (learning.go in this package).

CREATE TABLE judgments (
    turn_id       TEXT    PRIMARY KEY REFERENCES turns (id),
    session_id    TEXT    NOT NULL,
    score         INTEGER NOT NULL CHECK (score IN (-1, 0, 1)),
    votes         TEXT    NOT NULL DEFAULT '[]', -- JSON []store.Vote, raw answers included
    hint          TEXT    NOT NULL DEFAULT '',
    hint_accepted INTEGER NOT NULL DEFAULT 0 CHECK (hint_accepted IN (0, 1)),
    judge         TEXT    NOT NULL DEFAULT '',
    reason        TEXT    NOT NULL DEFAULT '',
    keep          INTEGER NOT NULL DEFAULT 0 CHECK (keep IN (0, 1)),
    why           TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    revised_at    INTEGER NOT NULL DEFAULT 0  -- last revision by later feedback (ReviseJudgment)
);
CREATE INDEX judgments_by_session ON judgments (session_id);

CREATE TABLE samples (
    turn_id          TEXT    PRIMARY KEY REFERENCES turns (id),
    session_id       TEXT    NOT NULL,
    method           TEXT    NOT NULL,
    use_rl           INTEGER NOT NULL CHECK (use_rl IN (0, 1)),
    reward           REAL    NOT NULL,
    teacher_logprobs BLOB,                        -- float32 LE, one per response id; NULL without OPD
    teacher_adapter  TEXT    NOT NULL DEFAULT '',
    teacher_version  INTEGER NOT NULL DEFAULT 0,
    policy_version   INTEGER NOT NULL,
    why              TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    trained_version  INTEGER NOT NULL DEFAULT 0   -- 0 until a version trained on it
);
CREATE INDEX samples_by_session ON samples (session_id);

CREATE TABLE versions (
    version    INTEGER PRIMARY KEY,
    dir        TEXT    NOT NULL,
    method     TEXT    NOT NULL DEFAULT '',
    metrics    TEXT    NOT NULL DEFAULT '{}', -- JSON store.VersionMetrics
    created_at INTEGER NOT NULL
);
