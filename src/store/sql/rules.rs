//! Channel rules ("allow similar for a while") in SQL: created once, read while active,
//! revoked with a conditional update.

use std::time::SystemTime;

use super::codec::{from_millis, to_millis};
use super::{Backend, SqlStore, SqlStoreError, WRITE};
use crate::core::rules::{ChannelRule, Similarity};

/// A rule as read.
type RuleRow = (
    String,         // id
    String,         // channel
    String,         // tool
    String,         // pattern (JSON of the similarity key)
    String,         // summary
    String,         // created_by
    i64,            // created_at
    i64,            // expires_at
    Option<String>, // approval_id
);

fn rule_from_row(row: RuleRow) -> Result<ChannelRule, SqlStoreError> {
    let (id, channel, tool, pattern, summary, created_by, created_at, expires_at, approval_id) =
        row;
    let key = serde_json::from_str(&pattern)
        .map_err(|e| SqlStoreError::corrupt("channel_rules.pattern", e))?;
    Ok(ChannelRule {
        id,
        channel,
        tool,
        similarity: Similarity { key, summary },
        created_by,
        created_at: from_millis(created_at, "channel_rules.created_at")?,
        expires_at: from_millis(expires_at, "channel_rules.expires_at")?,
        approval_id,
    })
}

impl SqlStore {
    #[tracing::instrument(level = "debug", skip(self, rule), fields(id = %rule.id), err(level = "debug", Display))]
    pub(super) async fn insert_rule(&self, rule: &ChannelRule) -> Result<(), SqlStoreError> {
        let pattern = serde_json::to_string(&rule.similarity.key)
            .map_err(|e| SqlStoreError::Invalid(format!("a rule's pattern as JSON: {e}")))?;
        with_writer!(self, pool => {
            sqlx::query(concat!(
                "INSERT INTO channel_rules (id, channel, tool, pattern, summary, created_by, ",
                "created_at, expires_at, approval_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
            ))
            .bind(rule.id.as_str())
            .bind(rule.channel.as_str())
            .bind(rule.tool.as_str())
            .bind(pattern.as_str())
            .bind(rule.similarity.summary.as_str())
            .bind(rule.created_by.as_str())
            .bind(to_millis(rule.created_at))
            .bind(to_millis(rule.expires_at))
            .bind(rule.approval_id.as_deref())
            .execute(pool)
            .await
            .map(|_| ())
            .map_err(SqlStoreError::query("record the rule"))?
        });
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    pub(super) async fn read_rules(
        &self,
        channel: &str,
        now: SystemTime,
    ) -> Result<Vec<ChannelRule>, SqlStoreError> {
        let rows = with_pool!(self, pool => {
            sqlx::query_as::<_, RuleRow>(concat!(
                "SELECT id, channel, tool, pattern, summary, created_by, created_at, expires_at, ",
                "approval_id FROM channel_rules WHERE channel = $1 AND expires_at > $2 ",
                "AND revoked_at IS NULL ORDER BY created_at, id"
            ))
            .bind(channel)
            .bind(to_millis(now))
            .fetch_all(pool)
            .await
            .map_err(SqlStoreError::query("read the channel's rules"))?
        });
        rows.into_iter().map(rule_from_row).collect()
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    pub(super) async fn revoke(
        &self,
        channel: &str,
        id: &str,
        by: &str,
    ) -> Result<bool, SqlStoreError> {
        let now = to_millis(SystemTime::now());
        let changed = with_writer!(self, pool => {
            sqlx::query(concat!(
                "UPDATE channel_rules SET revoked_by = $3, revoked_at = $4 ",
                "WHERE channel = $1 AND id = $2 AND revoked_at IS NULL AND expires_at > $4"
            ))
            .bind(channel)
            .bind(id)
            .bind(by)
            .bind(now)
            .execute(pool)
            .await
            .map_err(SqlStoreError::query("revoke the rule"))?
            .rows_affected()
        });
        Ok(changed > 0)
    }
}
