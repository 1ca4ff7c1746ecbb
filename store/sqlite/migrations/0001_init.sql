-- 0001: sessions, turns and the turn state machine.
--
-- Times are Unix nanoseconds (UTC). Token ids and logprobs are little-endian
-- int32 / float32 blobs (codec.go); messages, tools and the response are JSON.
-- Later migrations (0002_… judgments, samples, versions) live in files of
-- their own next to this one.

CREATE TABLE sessions (
    seq        INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    key        TEXT    NOT NULL DEFAULT '',
    key_source TEXT    NOT NULL DEFAULT '',
    epoch      INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL,
    turns      INTEGER NOT NULL DEFAULT 0, -- also the next turn's index
    expired    INTEGER NOT NULL DEFAULT 0 CHECK (expired IN (0, 1))
);
-- A key names one conversation; an empty key (a session found by history or
-- new) names none.
CREATE UNIQUE INDEX sessions_by_key ON sessions (key) WHERE key <> '';
-- ExpireIdle scans live sessions by last activity.
CREATE INDEX sessions_by_last_seen ON sessions (last_seen) WHERE expired = 0;

-- Every state a turn may be in, and the arrows between them (store.CanTransition).
CREATE TABLE turn_states (state TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO turn_states (state) VALUES
    ('generated'), ('observed'), ('expired'), ('judged'), ('ready'), ('trained'), ('dropped');

CREATE TABLE turn_transitions (
    from_state TEXT NOT NULL REFERENCES turn_states (state),
    to_state   TEXT NOT NULL REFERENCES turn_states (state),
    PRIMARY KEY (from_state, to_state)
) WITHOUT ROWID;
INSERT INTO turn_transitions (from_state, to_state) VALUES
    ('generated', 'observed'), ('generated', 'expired'), ('generated', 'dropped'),
    ('expired', 'observed'), ('expired', 'dropped'),
    ('observed', 'judged'), ('observed', 'dropped'),
    ('judged', 'ready'), ('judged', 'dropped'),
    ('ready', 'trained'), ('ready', 'dropped');

-- A turn is split in two rows. turns holds what changes (state, next state,
-- feedback) and what the loops filter on, so every transition rewrites a few
-- hundred bytes; turn_payloads holds the large, write-once part (a 30k-char
-- system prompt, 8k prompt ids), which no transition ever touches again.
CREATE TABLE turns (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    session_id         TEXT    NOT NULL REFERENCES sessions (id),
    idx                INTEGER NOT NULL,
    type               TEXT    NOT NULL CHECK (type IN ('main', 'side')),
    epoch              INTEGER NOT NULL DEFAULT 0,
    state              TEXT    NOT NULL DEFAULT 'generated' REFERENCES turn_states (state),
    created_at         INTEGER NOT NULL,
    state_changed_at   INTEGER NOT NULL,

    model              TEXT    NOT NULL DEFAULT '',
    policy_version     INTEGER NOT NULL DEFAULT 0,
    engine             TEXT    NOT NULL DEFAULT '',
    finish_reason      TEXT    NOT NULL DEFAULT '',
    prompt_tokens      INTEGER NOT NULL DEFAULT 0,
    completion_tokens  INTEGER NOT NULL DEFAULT 0,
    queue_ns           INTEGER NOT NULL DEFAULT 0,
    prefill_ns         INTEGER NOT NULL DEFAULT 0,
    decode_ns          INTEGER NOT NULL DEFAULT 0,
    total_ns           INTEGER NOT NULL DEFAULT 0,
    conversation_hash  TEXT    NOT NULL DEFAULT '',

    next_state         TEXT,                          -- JSON []chat.Message
    next_state_kind    TEXT    NOT NULL DEFAULT '',
    observed_at        INTEGER NOT NULL DEFAULT 0,
    feedback_rating    INTEGER CHECK (feedback_rating IN (-1, 0, 1)),
    feedback_text      TEXT,
    feedback_at        INTEGER,
    drop_reason        TEXT    NOT NULL DEFAULT '',

    UNIQUE (session_id, idx)
);
-- Every index costs a page write on each InsertTurn, so only the lookups
-- the loops make per request or per batch have one: by id and by (session,
-- index) above, by state, by conversation hash. Queries that use the partial
-- index repeat its condition (conversation_hash <> ''), or SQLite cannot
-- prove the index applies. Export's --since filters while it scans.
CREATE INDEX turns_by_state ON turns (state, type, seq);
CREATE INDEX turns_by_hash ON turns (conversation_hash, seq) WHERE conversation_hash <> '';

CREATE TABLE turn_payloads (
    turn_seq           INTEGER PRIMARY KEY REFERENCES turns (seq),
    messages           TEXT    NOT NULL DEFAULT '[]', -- JSON []chat.Message
    tools              TEXT    NOT NULL DEFAULT '[]', -- JSON []chat.Tool
    prompt_text        TEXT    NOT NULL DEFAULT '',
    prompt_ids         BLOB,                          -- int32 LE
    response           TEXT    NOT NULL DEFAULT '{}', -- JSON chat.Message
    response_text      TEXT    NOT NULL DEFAULT '',
    response_ids       BLOB,                          -- int32 LE
    behaviour_logprobs BLOB,                          -- float32 LE, one per response id
    CHECK (behaviour_logprobs IS NULL OR response_ids IS NULL
           OR length(behaviour_logprobs) = length(response_ids))
);

-- The state machine, enforced below every code path: an UPDATE that moves a
-- turn along an arrow turn_transitions does not list aborts.
CREATE TRIGGER turns_state_machine
BEFORE UPDATE OF state ON turns
FOR EACH ROW WHEN NEW.state <> OLD.state AND NOT EXISTS (
    SELECT 1 FROM turn_transitions WHERE from_state = OLD.state AND to_state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'clawrl: illegal turn transition');
END;

-- A turn is born generated.
CREATE TRIGGER turns_born_generated
BEFORE INSERT ON turns
FOR EACH ROW WHEN NEW.state <> 'generated'
BEGIN
    SELECT RAISE(ABORT, 'clawrl: a new turn must be generated');
END;
