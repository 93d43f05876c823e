-- What a call that ran gave (its start), and the lookups that let an approval say that the
-- channel already ran the same call: confirmed approvals by call, audit records by approval.
ALTER TABLE audit ADD COLUMN result TEXT;
CREATE INDEX approvals_confirmed_by_call ON approvals (channel, tool, arguments_hash)
    WHERE status = 'confirmed';
CREATE INDEX audit_by_approval ON audit (approval_id) WHERE approval_id IS NOT NULL;
