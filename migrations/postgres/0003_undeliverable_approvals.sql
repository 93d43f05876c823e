-- An approval that could not be shown to anyone (the chat refused the message) is settled as
-- 'undeliverable'. The column's CHECK constraint carries PostgreSQL's default name.
ALTER TABLE approvals DROP CONSTRAINT approvals_status_check;
ALTER TABLE approvals ADD CONSTRAINT approvals_status_check
    CHECK (status IN ('pending', 'confirmed', 'cancelled', 'expired', 'abandoned', 'undeliverable'));
