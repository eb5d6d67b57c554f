//! Remembered approvals (A9) in the `remembered_approvals` table: every process on the schema
//! reads the same rows, so an approval remembered through one runtime answers asks in all.

use super::connection::PostgresStore;
use super::driver::{describe_pg, pg_kind};
use crate::remembered_approvals::RememberedApproval;
use crate::store::rows::{REMEMBERED_COLUMN_LIST, RememberedColumns};
use crate::store::{RememberedApprovalStore, StoreError};

/// An error of remembered-approval operation `operation`, naming the approval when there is one.
fn fail<'a>(operation: &'static str, id: Option<&'a str>) -> impl Fn(tokio_postgres::Error) -> StoreError + 'a {
    move |e| {
        let about = id.map(|id| format!(" `{id}`")).unwrap_or_default();
        StoreError::new(pg_kind(&e), format!("{operation}: remembered approval{about}: {}", describe_pg(&e)))
            .with_source(e)
    }
}

#[async_trait::async_trait]
impl RememberedApprovalStore for PostgresStore {
    async fn remember_approval(&self, approval: &RememberedApproval) -> Result<(), StoreError> {
        let fail = fail("remember_approval", Some(&approval.id));
        let row = RememberedColumns::of(approval);
        let client = self.client("remember_approval").await?;
        let statement = client
            .prepare_cached(&format!(
                "INSERT INTO remembered_approvals ({REMEMBERED_COLUMN_LIST}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
            ))
            .await
            .map_err(&fail)?;
        client
            .execute(
                &statement,
                &[
                    &row.id,
                    &row.scope,
                    &row.tool,
                    &row.matcher_kind,
                    &row.matcher,
                    &row.user_id,
                    &row.thread_id,
                    &row.created_at,
                    &row.created_by,
                ],
            )
            .await
            .map_err(&fail)?;
        Ok(())
    }

    async fn list_remembered_approvals(&self, tool: Option<&str>) -> Result<Vec<RememberedApproval>, StoreError> {
        let fail = fail("list_remembered_approvals", None);
        let client = self.client("list_remembered_approvals").await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT {REMEMBERED_COLUMN_LIST} FROM remembered_approvals
                 WHERE $1::text IS NULL OR tool = $1 ORDER BY created_at, id"
            ))
            .await
            .map_err(&fail)?;
        let rows = client.query(&statement, &[&tool]).await.map_err(&fail)?;
        rows.iter()
            .map(|row| {
                let read = || -> Result<RememberedColumns, tokio_postgres::Error> {
                    Ok(RememberedColumns {
                        id: row.try_get(0)?,
                        scope: row.try_get(1)?,
                        tool: row.try_get(2)?,
                        matcher_kind: row.try_get(3)?,
                        matcher: row.try_get(4)?,
                        user_id: row.try_get(5)?,
                        thread_id: row.try_get(6)?,
                        created_at: row.try_get(7)?,
                        created_by: row.try_get(8)?,
                    })
                };
                read().map_err(&fail)?.into_approval("list_remembered_approvals")
            })
            .collect()
    }

    async fn revoke_remembered_approval(&self, id: &str) -> Result<bool, StoreError> {
        let fail = fail("revoke_remembered_approval", Some(id));
        let client = self.client("revoke_remembered_approval").await?;
        let statement = client.prepare_cached("DELETE FROM remembered_approvals WHERE id = $1").await.map_err(&fail)?;
        Ok(client.execute(&statement, &[&id]).await.map_err(&fail)? == 1)
    }
}
