-- How each stage was captured: a JSON array of capture records (`stagediff capture`'s capture.json),
-- appended to by POST …/stages/:stageId/captures.
ALTER TABLE stages ADD COLUMN captures jsonb NOT NULL DEFAULT '[]'::jsonb;
