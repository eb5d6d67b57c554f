//! Pages of `GET /threads`: `limit` (at most [`MAX_PAGE`]) and an opaque `cursor`, the
//! position after the last thread of the previous page.
//!
//! A cursor is the creation time and id of that thread (`<createdAt>.<id>`), and a page holds
//! the threads ordered after it by `(createdAt, id)`: a walk sees every thread that existed
//! when it started exactly once, also while threads are created meanwhile.

use std::collections::HashMap;

use hooks_runtime::store::ThreadRecord;

use crate::error::{ApiError, printable};

/// Threads per page without a `limit`.
pub(crate) const DEFAULT_PAGE: usize = 100;
/// The largest `limit`.
pub(crate) const MAX_PAGE: usize = 1000;

/// Which page of threads a request asks for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PageQuery {
    pub(crate) limit: usize,
    after: Option<(i64, String)>,
}

impl PageQuery {
    /// Reads `limit` and `cursor`, refusing anything else.
    pub(crate) fn parse(params: &HashMap<String, String>) -> Result<Self, ApiError> {
        let mut query = PageQuery { limit: DEFAULT_PAGE, after: None };
        for (name, value) in params {
            match name.as_str() {
                "limit" => {
                    query.limit = match value.parse::<usize>() {
                        Ok(limit) if (1..=MAX_PAGE).contains(&limit) => limit,
                        _ => {
                            return Err(ApiError::bad_request(
                                "invalid_query",
                                format!("query parameter `limit` must be a whole number from 1 to {MAX_PAGE}"),
                            ));
                        }
                    };
                }
                "cursor" => query.after = Some(parse_cursor(value)?),
                other => {
                    return Err(ApiError::bad_request(
                        "invalid_query",
                        format!(
                            "unknown query parameter `{}`; the parameters are `limit` and `cursor`",
                            printable(other)
                        ),
                    ));
                }
            }
        }
        Ok(query)
    }

    /// The records of this page out of all of them, and the cursor of the next page if there
    /// are more.
    pub(crate) fn select(&self, mut records: Vec<ThreadRecord>) -> (Vec<ThreadRecord>, Option<String>) {
        records.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        if let Some((created_at, id)) = &self.after {
            records.retain(|record| (record.created_at, &record.id) > (*created_at, id));
        }
        let more = records.len() > self.limit;
        records.truncate(self.limit);
        let next = match records.last() {
            Some(last) if more => Some(format!("{}.{}", last.created_at, last.id)),
            _ => None,
        };
        (records, next)
    }
}

fn parse_cursor(text: &str) -> Result<(i64, String), ApiError> {
    text.split_once('.')
        .and_then(|(created_at, id)| Some((created_at.parse().ok()?, id.to_owned())))
        .filter(|(_, id)| !id.is_empty())
        .ok_or_else(|| {
            ApiError::bad_request(
                "invalid_cursor",
                format!(
                    "`{}` is not a cursor of this listing; pass the `next` of the previous page as it was",
                    printable(text)
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, created_at: i64) -> ThreadRecord {
        ThreadRecord::new(id, "a", created_at)
    }

    fn query(pairs: &[(&str, &str)]) -> Result<PageQuery, ApiError> {
        PageQuery::parse(&pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect())
    }

    #[test]
    fn pages_walk_every_record_once_in_creation_order() {
        let records: Vec<ThreadRecord> =
            (0..25).map(|n| record(&format!("t{:02}", 24 - n), i64::from(n / 3))).collect();
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut pairs = vec![("limit", "7".to_owned())];
            if let Some(cursor) = &cursor {
                pairs.push(("cursor", cursor.clone()));
            }
            let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let (page, next) = query(&pairs).unwrap().select(records.clone());
            assert!(page.len() <= 7);
            seen.extend(page.into_iter().map(|record| (record.created_at, record.id)));
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        let mut expected: Vec<(i64, String)> = records.into_iter().map(|r| (r.created_at, r.id)).collect();
        expected.sort();
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_bad_limit_or_cursor_is_refused_naming_it() {
        for (name, value, code) in
            [("limit", "0", "invalid_query"), ("limit", "1001", "invalid_query"), ("cursor", "nope", "invalid_cursor")]
        {
            let error = query(&[(name, value)]).unwrap_err();
            assert_eq!(error.code, code);
            assert!(error.message.contains(name) || error.message.contains("cursor"), "{}", error.message);
        }
        assert_eq!(query(&[]).unwrap().limit, DEFAULT_PAGE);
    }
}
