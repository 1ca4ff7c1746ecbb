-- 0005: the token limit a turn's response was generated under
-- (store.Turn.MaxTokens): the request's max_tokens, or the server's default,
-- capped by the context window's room. It is the budget a teacher answer must
-- end within (--teacher-select-length fit). Turns written before this step
-- did not keep it: 0, not known. A constant default adds the column without
-- rewriting the table.
ALTER TABLE turns ADD COLUMN max_tokens INTEGER NOT NULL DEFAULT 0;
