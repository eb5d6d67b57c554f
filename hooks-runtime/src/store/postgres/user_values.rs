//! User values (U1) in the `user_values` table: every process on the schema reads and writes
//! the same ones.
//!
//! A set takes a transaction-scoped advisory lock on its user and key first, so the old value it
//! reads is the one the previous set left, even when the key did not exist yet (a row lock
//! cannot cover a row that is not there); then it writes, and commits both in one step.

use serde_json::Value;

use super::connection::PostgresStore;
use super::driver::describe_pg;
use crate::store::rows::{encode_user_value, user_error, user_value};
use crate::store::{StoreError, UserValue};

impl PostgresStore {
    /// Every value of `user_id`, ordered by key.
    pub(super) async fn read_user_values(&self, user_id: &str) -> Result<Vec<UserValue>, StoreError> {
        let fail = user_error("user_values", user_id);
        let client = self.client("user_values").await?;
        let statement = client
            .prepare_cached("SELECT key, value::text, updated_at FROM user_values WHERE user_id = $1 ORDER BY key")
            .await
            .map_err(|e| fail(describe_pg(&e)))?;
        let rows = client.query(&statement, &[&user_id]).await.map_err(|e| fail(describe_pg(&e)))?;
        rows.iter()
            .map(|row| {
                let read = || -> Result<(String, String, i64), tokio_postgres::Error> {
                    Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?))
                };
                let (key, json, updated_at) = read().map_err(|e| fail(describe_pg(&e)))?;
                Ok(UserValue { value: user_value(&fail, &key, &json)?, key, updated_at })
            })
            .collect()
    }

    /// Sets or removes one value and returns the one it replaced, atomically.
    pub(super) async fn write_user_value(
        &self,
        user_id: &str,
        key: &str,
        value: Option<&Value>,
    ) -> Result<Option<Value>, StoreError> {
        let fail = user_error("set_user_value", user_id);
        let pg = |e: tokio_postgres::Error| fail(describe_pg(&e));
        let json = value.map(|value| encode_user_value(&fail, key, value)).transpose()?;
        let mut client = self.client("set_user_value").await?;
        let tx = client.transaction().await.map_err(pg)?;
        // Hash collisions only make two unrelated keys take turns.
        let lock = format!("{} user value {}:{user_id}{key}", self.inner.user_channel, user_id.len());
        tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&lock]).await.map_err(pg)?;
        let old: Option<String> = tx
            .query_opt("SELECT value::text FROM user_values WHERE user_id = $1 AND key = $2", &[&user_id, &key])
            .await
            .map_err(pg)?
            .map(|row| row.try_get(0))
            .transpose()
            .map_err(pg)?;
        match &json {
            Some(json) => {
                tx.execute(
                    "INSERT INTO user_values (user_id, key, value, updated_at) VALUES ($1, $2, $3::text::json, $4)
                     ON CONFLICT (user_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at",
                    &[&user_id, &key, json, &crate::ids::now_ms()],
                )
                .await
            }
            None => tx.execute("DELETE FROM user_values WHERE user_id = $1 AND key = $2", &[&user_id, &key]).await,
        }
        .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        old.map(|old| user_value(&fail, key, &old)).transpose()
    }
}
