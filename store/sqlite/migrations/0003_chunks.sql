-- 0003: content-defined chunks for the large payload fields (chunks.go).
--
-- Every request repeats its conversation so far, so a session's turn k
-- carries turns 1..k−1 again, and every session carries the same system
-- prompt and tool schemas. Messages, tools, prompt text and prompt ids of
-- 16 KiB or more are cut into content-defined chunks, each stored once by
-- its hash; the payload row keeps the list of chunk ids. A row whose
-- *_chunks column is NULL keeps the field inline (small fields, and every
-- row written before this migration).

CREATE TABLE chunks (
    id   INTEGER PRIMARY KEY,
    hash BLOB    NOT NULL UNIQUE, -- first 16 bytes of SHA-256(data)
    data BLOB    NOT NULL
);

ALTER TABLE turn_payloads ADD COLUMN messages_chunks BLOB;    -- int64 LE chunk ids
ALTER TABLE turn_payloads ADD COLUMN tools_chunks BLOB;
ALTER TABLE turn_payloads ADD COLUMN prompt_text_chunks BLOB;
ALTER TABLE turn_payloads ADD COLUMN prompt_ids_chunks BLOB;
