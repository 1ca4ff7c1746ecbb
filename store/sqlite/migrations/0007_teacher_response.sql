-- 0007: a sample may train on a response the OPD teacher wrote (the model
-- with the hint in context) instead of the turn's own sampled response
-- (--opd-response teacher, context distillation). NULL = the turn's own.
ALTER TABLE samples ADD COLUMN teacher_response_ids BLOB; -- int32 LE token ids
