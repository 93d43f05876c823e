-- Approval choices: a cancel may say why (approvals.note, and audit.note for the call), a
-- waiting run's state is kept with its approval so a click after a restart can resume it
-- (approvals.resume), and "allow similar for a while" creates channel rules.
ALTER TABLE approvals ADD COLUMN note TEXT;
ALTER TABLE approvals ADD COLUMN resume TEXT;
ALTER TABLE audit ADD COLUMN note TEXT;
CREATE TABLE channel_rules (
    id          TEXT    PRIMARY KEY,
    channel     TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    -- What it matches, as JSON (see core/rules.rs), and how people read it.
    pattern     TEXT    NOT NULL,
    summary     TEXT    NOT NULL,
    created_by  TEXT    NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    -- The approval whose click created it.
    approval_id TEXT,
    revoked_by  TEXT,
    revoked_at  BIGINT
);
CREATE INDEX channel_rules_by_channel ON channel_rules (channel, expires_at);
