//! Extra JSON fields, and the field-by-field `Clone` of the types that carry them.

/// Extra JSON fields carried beside the typed ones, so a field this crate does not model (a
/// hook's `metadata`, a store's `status`) survives every round trip.
pub type ExtraFields = serde_json::Map<String, serde_json::Value>;

/// `Clone` written field by field, so that `clone_from` reuses every `String`'s buffer: a
/// by-value hook's snapshot (`Vec::clone_from` over these values) then copies bytes and
/// allocates nothing after a chain's first. The derived `Clone` would clone each field afresh.
/// Types with the same fields are named together, before one list of their fields.
macro_rules! clone_field_by_field {
    ($type:ident, $($more:ident),+ { $($fields:tt)* }) => {
        clone_field_by_field!($type { $($fields)* });
        clone_field_by_field!($($more),+ { $($fields)* });
    };
    ($type:ident { $($field:ident),* $(,)? $(; $extra:ident)? }) => {
        impl Clone for $type {
            fn clone(&self) -> Self {
                $type { $($field: self.$field.clone(),)* $($extra: self.$extra.clone())? }
            }

            fn clone_from(&mut self, source: &Self) {
                $(self.$field.clone_from(&source.$field);)*
                $($crate::types::extra::clone_extra_from(&mut self.$extra, &source.$extra);)?
            }
        }
    };
}

/// `clone_from` for [`ExtraFields`], whose map's own `clone_from` drops and rebuilds it: when
/// both maps hold the same keys (a snapshot of the same messages, as dispatch takes them before
/// each by-value hook), the values are copied in place, reusing their strings, so a snapshot into
/// a warm buffer allocates nothing.
pub(crate) fn clone_extra_from(target: &mut ExtraFields, source: &ExtraFields) {
    let same_keys = target.len() == source.len() && target.keys().zip(source.keys()).all(|(a, b)| a == b);
    if !same_keys {
        target.clone_from(source);
        return;
    }
    for (into, from) in target.values_mut().zip(source.values()) {
        match (into, from) {
            (serde_json::Value::String(into), serde_json::Value::String(from)) => into.clone_from(from),
            (into, from) if into != from => *into = from.clone(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn extra(value: serde_json::Value) -> ExtraFields {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn extra_fields_with_the_same_keys_are_copied_value_by_value() {
        let mut target = extra(json!({"status": "pending", "metadata": {"a": 1}, "n": 1}));
        let source = extra(json!({"status": "started", "metadata": {"a": 2}, "n": 1}));
        let status_buffer = target["status"].as_str().unwrap().as_ptr();
        clone_extra_from(&mut target, &source);
        assert_eq!(target, source);
        // A string value is copied into its old buffer, which fits it (both are 7 bytes long).
        assert_eq!(target["status"].as_str().unwrap().as_ptr(), status_buffer);
    }

    #[test]
    fn extra_fields_with_other_keys_are_replaced() {
        let mut target = extra(json!({"status": "pending", "old": true}));
        let source = extra(json!({"status": "completed", "new": false}));
        clone_extra_from(&mut target, &source);
        assert_eq!(target, source);
        let mut shorter = extra(json!({"a": 1, "b": 2}));
        clone_extra_from(&mut shorter, &extra(json!({"a": 1})));
        assert_eq!(shorter, extra(json!({"a": 1})));
    }
}
