-- 0004: the text the gateway appended to the rendered prompt to enforce
-- tool_choice "required" or a named function (store.Turn.ForcedText). The
-- prompt text and ids already end with it; the column says where the
-- template's prompt ends and the forced opening of the tool call begins, so
-- readers (export, the teacher) need not re-render to find out. Turns
-- written before this step had nothing forced: ''.

ALTER TABLE turn_payloads ADD COLUMN forced_text TEXT NOT NULL DEFAULT '';
