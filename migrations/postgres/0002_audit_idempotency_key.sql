-- A retried audit write must not count twice: when the database restarts after a commit
-- but before its answer arrives, the store writes the same record again with the same key,
-- and the second insert does nothing. NULL for rows written before this migration.
ALTER TABLE audit ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX audit_idempotency_key ON audit (idempotency_key);
