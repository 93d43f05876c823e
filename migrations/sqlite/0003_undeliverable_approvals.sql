-- An approval that could not be shown to anyone (the chat refused the message) is settled as
-- 'undeliverable'. SQLite cannot change a CHECK constraint in place, so the table is rebuilt
-- with the same columns and indexes; the rows are copied unchanged.
CREATE TABLE approvals_new (
    id             TEXT    PRIMARY KEY,
    run_id         TEXT    NOT NULL,
    channel        TEXT    NOT NULL,
    requester      TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    arguments      TEXT    NOT NULL,
    arguments_hash TEXT    NOT NULL,
    source         TEXT    NOT NULL,
    reason         TEXT    NOT NULL,
    status         TEXT    NOT NULL
        CHECK (status IN ('pending', 'confirmed', 'cancelled', 'expired', 'abandoned', 'undeliverable')),
    decided_by     TEXT,
    decided_at     INTEGER,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    message_ref    TEXT
) STRICT;
INSERT INTO approvals_new
    SELECT id, run_id, channel, requester, tool, arguments, arguments_hash, source, reason,
           status, decided_by, decided_at, created_at, expires_at, message_ref
    FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_new RENAME TO approvals;
CREATE INDEX approvals_pending_by_expiry ON approvals (expires_at) WHERE status = 'pending';
CREATE INDEX approvals_pending_by_channel ON approvals (channel, created_at) WHERE status = 'pending';
