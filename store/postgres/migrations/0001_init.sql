-- 0001: sessions, turns, the turn state machine and the learning loop's
-- rows (judgments, samples, versions), the same tables as store/sqlite's
-- 0001–0004 in one step.
--
-- Times are Unix nanoseconds (UTC) in BIGINT, as in SQLite, so both stores
-- round-trip the same values. Token ids and logprobs are int4[] / real[]
-- (a real holds a float32 exactly). Messages, tools and the response are
-- JSON kept as TEXT, not jsonb: jsonb would rewrite a tool's parameter
-- schema, which the store must return byte for byte. Postgres compresses
-- large values itself (TOAST), so there is no chunk table.

CREATE TABLE sessions (
    seq        BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    key        TEXT    NOT NULL DEFAULT '',
    key_source TEXT    NOT NULL DEFAULT '',
    epoch      INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT  NOT NULL,
    last_seen  BIGINT  NOT NULL,
    turns      INTEGER NOT NULL DEFAULT 0, -- also the next turn's index
    expired    BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE UNIQUE INDEX sessions_by_key ON sessions (key) WHERE key <> '';
CREATE INDEX sessions_by_last_seen ON sessions (last_seen) WHERE NOT expired;

CREATE TABLE turn_transitions (
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    PRIMARY KEY (from_state, to_state)
);
INSERT INTO turn_transitions (from_state, to_state) VALUES
    ('generated', 'observed'), ('generated', 'expired'), ('generated', 'dropped'),
    ('expired', 'observed'), ('expired', 'dropped'),
    ('observed', 'judged'), ('observed', 'dropped'),
    ('judged', 'ready'), ('judged', 'dropped'),
    ('ready', 'trained'), ('ready', 'dropped');

CREATE TABLE turns (
    seq                BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    session_id         TEXT    NOT NULL REFERENCES sessions (id),
    idx                INTEGER NOT NULL,
    type               TEXT    NOT NULL CHECK (type IN ('main', 'side')),
    epoch              INTEGER NOT NULL DEFAULT 0,
    state              TEXT    NOT NULL DEFAULT 'generated' CHECK (state IN
                           ('generated', 'observed', 'expired', 'judged', 'ready', 'trained', 'dropped')),
    created_at         BIGINT  NOT NULL,
    state_changed_at   BIGINT  NOT NULL,

    model              TEXT    NOT NULL DEFAULT '',
    policy_version     BIGINT  NOT NULL DEFAULT 0,
    engine             TEXT    NOT NULL DEFAULT '',
    finish_reason      TEXT    NOT NULL DEFAULT '',
    prompt_tokens      INTEGER NOT NULL DEFAULT 0,
    completion_tokens  INTEGER NOT NULL DEFAULT 0,
    queue_ns           BIGINT  NOT NULL DEFAULT 0,
    prefill_ns         BIGINT  NOT NULL DEFAULT 0,
    decode_ns          BIGINT  NOT NULL DEFAULT 0,
    total_ns           BIGINT  NOT NULL DEFAULT 0,
    conversation_hash  TEXT    NOT NULL DEFAULT '',

    next_state         TEXT,                          -- JSON []chat.Message
    next_state_kind    TEXT    NOT NULL DEFAULT '',
    observed_at        BIGINT  NOT NULL DEFAULT 0,
    feedback_rating    INTEGER CHECK (feedback_rating IN (-1, 0, 1)),
    feedback_text      TEXT,
    feedback_at        BIGINT,
    drop_reason        TEXT    NOT NULL DEFAULT '',

    -- The write-once payload, in the same row: Postgres keeps large values
    -- out of line (TOAST), so a state change does not rewrite them.
    messages           TEXT    NOT NULL DEFAULT '[]',
    tools              TEXT    NOT NULL DEFAULT '[]',
    prompt_text        TEXT    NOT NULL DEFAULT '',
    prompt_ids         INTEGER[],
    forced_text        TEXT    NOT NULL DEFAULT '',
    response           TEXT    NOT NULL DEFAULT '{}',
    response_text      TEXT    NOT NULL DEFAULT '',
    response_ids       INTEGER[],
    behaviour_logprobs REAL[],
    CHECK (behaviour_logprobs IS NULL OR response_ids IS NULL
           OR cardinality(behaviour_logprobs) = cardinality(response_ids)),

    UNIQUE (session_id, idx)
);
CREATE INDEX turns_by_state ON turns (state, type, seq);
CREATE INDEX turns_by_hash ON turns (conversation_hash, seq) WHERE conversation_hash <> '';

-- The state machine, enforced below every code path.
CREATE FUNCTION clawrl_turn_state_machine() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.state <> 'generated' THEN
            RAISE EXCEPTION 'clawrl: a new turn must be generated' USING ERRCODE = 'check_violation';
        END IF;
    ELSIF NEW.state <> OLD.state AND NOT EXISTS (
            SELECT 1 FROM turn_transitions WHERE from_state = OLD.state AND to_state = NEW.state) THEN
        RAISE EXCEPTION 'clawrl: illegal turn transition % -> %', OLD.state, NEW.state
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER turns_state_machine BEFORE INSERT OR UPDATE OF state ON turns
    FOR EACH ROW EXECUTE FUNCTION clawrl_turn_state_machine();

CREATE TABLE judgments (
    turn_id       TEXT    PRIMARY KEY REFERENCES turns (id),
    session_id    TEXT    NOT NULL,
    score         INTEGER NOT NULL CHECK (score IN (-1, 0, 1)),
    votes         TEXT    NOT NULL DEFAULT '[]', -- JSON []store.Vote
    hint          TEXT    NOT NULL DEFAULT '',
    hint_accepted BOOLEAN NOT NULL DEFAULT FALSE,
    judge         TEXT    NOT NULL DEFAULT '',
    reason        TEXT    NOT NULL DEFAULT '',
    keep          BOOLEAN NOT NULL DEFAULT FALSE,
    why           TEXT    NOT NULL DEFAULT '',
    created_at    BIGINT  NOT NULL,
    revised_at    BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX judgments_by_session ON judgments (session_id);

CREATE TABLE samples (
    turn_id          TEXT    PRIMARY KEY REFERENCES turns (id),
    session_id       TEXT    NOT NULL,
    method           TEXT    NOT NULL,
    use_rl           BOOLEAN NOT NULL,
    reward           DOUBLE PRECISION NOT NULL,
    teacher_logprobs REAL[],
    teacher_adapter  TEXT    NOT NULL DEFAULT '',
    teacher_version  BIGINT  NOT NULL DEFAULT 0,
    policy_version   BIGINT  NOT NULL,
    why              TEXT    NOT NULL,
    created_at       BIGINT  NOT NULL,
    trained_version  BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX samples_by_session ON samples (session_id);

CREATE TABLE versions (
    version    BIGINT PRIMARY KEY,
    dir        TEXT   NOT NULL,
    method     TEXT   NOT NULL DEFAULT '',
    metrics    TEXT   NOT NULL DEFAULT '{}', -- JSON store.VersionMetrics
    created_at BIGINT NOT NULL
);
