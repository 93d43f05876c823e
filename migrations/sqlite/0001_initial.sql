-- The bot's own state: conversations, channel settings, runs, approvals and the audit log.
-- Times are integer milliseconds since the Unix epoch, except audit.at, which is seconds
-- (as the agent loop records it). STRICT tables make SQLite refuse a value of the wrong type.

-- One row per message of a channel's conversation, in append order (id).
CREATE TABLE messages (
    id         INTEGER PRIMARY KEY,
    channel    TEXT    NOT NULL,
    -- The JSON of a ChatMessage.
    message    TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
-- A channel's newest messages first (load_history, clear).
CREATE INDEX messages_by_channel ON messages (channel, id);
-- Retention (prune_history).
CREATE INDEX messages_by_age ON messages (created_at);

CREATE TABLE channel_settings (
    channel    TEXT    PRIMARY KEY,
    mode       TEXT    NOT NULL CHECK (mode IN ('smart', 'strict')),
    profile    TEXT    NOT NULL,
    changed_by TEXT    NOT NULL,
    changed_at INTEGER NOT NULL
) STRICT;

-- Agent runs, so an approval whose process died can be told from one still waiting.
CREATE TABLE runs (
    id           TEXT    PRIMARY KEY,
    channel      TEXT    NOT NULL,
    -- The process (host-pid): several instances may share one database.
    instance     TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    finished_at  INTEGER
) STRICT;
-- Live runs by heartbeat (abandon_orphaned).
CREATE INDEX runs_live ON runs (heartbeat_at) WHERE finished_at IS NULL;

-- Calls waiting for (or decided by) a person. Only a pending row ever changes status.
-- No foreign key to runs: an approval outlives its run's bookkeeping row, and a missing run
-- means an orphaned approval.
CREATE TABLE approvals (
    id             TEXT    PRIMARY KEY,
    run_id         TEXT    NOT NULL,
    channel        TEXT    NOT NULL,
    requester      TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    -- The exact arguments that run if confirmed, as JSON, and the SHA-256 the loop checks.
    arguments      TEXT    NOT NULL,
    arguments_hash TEXT    NOT NULL,
    source         TEXT    NOT NULL,
    reason         TEXT    NOT NULL,
    status         TEXT    NOT NULL
        CHECK (status IN ('pending', 'confirmed', 'cancelled', 'expired', 'abandoned')),
    decided_by     TEXT,
    decided_at     INTEGER,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    -- The chat message that shows it (a front end's reference), once posted.
    message_ref    TEXT
) STRICT;
-- Pending ones by expiry (expire_overdue) and by channel (pending_approvals).
CREATE INDEX approvals_pending_by_expiry ON approvals (expires_at) WHERE status = 'pending';
CREATE INDEX approvals_pending_by_channel ON approvals (channel, created_at) WHERE status = 'pending';

-- Every tool call, whatever became of it. Never cleared, never pruned.
CREATE TABLE audit (
    id                INTEGER PRIMARY KEY,
    at                INTEGER NOT NULL,
    run_id            TEXT    NOT NULL,
    channel           TEXT    NOT NULL,
    user_name         TEXT    NOT NULL,
    tool              TEXT    NOT NULL,
    arguments_summary TEXT    NOT NULL,
    decision          TEXT    NOT NULL,
    source            TEXT    NOT NULL,
    reason            TEXT    NOT NULL,
    outcome           TEXT    NOT NULL,
    approval_id       TEXT,
    duration_ms       INTEGER NOT NULL,
    output_bytes      INTEGER NOT NULL
) STRICT;
-- A channel's newest records first (recent_audit).
CREATE INDEX audit_by_channel ON audit (channel, id);
