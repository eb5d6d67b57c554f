//! User values: `GET /user/values` and `GET /user/values/{key}`. (`PUT` takes the value itself,
//! any JSON, as its body.)

use serde::Serialize;
use serde_json::Value;

/// A user value with the time it was last set.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UserValueView {
    pub(crate) key: String,
    /// The user's own JSON.
    pub(crate) value: Value,
    pub(crate) updated_at: i64,
}

impl From<hooks_runtime::store::UserValue> for UserValueView {
    fn from(value: hooks_runtime::store::UserValue) -> Self {
        UserValueView { key: value.key, value: value.value, updated_at: value.updated_at }
    }
}

/// `GET /user/values`: ordered by key.
#[derive(Debug, Serialize)]
pub(crate) struct UserValueList {
    pub(crate) values: Vec<UserValueView>,
}
