-- Who continues a run past its decided approval: the run that asked, or the process a click
-- resumed it in after a restart. Set once by a conditional update, so a decided call runs
-- once even when both try.
ALTER TABLE approvals ADD COLUMN continued_by TEXT;
