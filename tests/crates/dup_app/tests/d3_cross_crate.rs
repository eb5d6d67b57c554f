//! D3 across crates: the registry check fails closed and names both locations.

use hooks_runtime::resolution::Registry;

#[test]
fn d3_duplicate_id_across_crates_fails_verification_naming_both_locations() {
    // Touch both crates so the linker keeps their registrations.
    let _ = (dup_app::audit as fn(_, _), dup_app::audit_async);
    let registry = Registry::linked();
    let error = registry.verify().expect_err("two crates define `audit_messages`");
    let text = error.to_string();
    assert_eq!(error.duplicates.len(), 1, "{text}");
    assert!(text.contains("hook id `audit_messages` is defined twice"), "{text}");
    assert!(text.contains("crate `dup_hooks_a`") && text.contains("dup_hooks_a::audit"), "{text}");
    assert!(text.contains("crate `dup_hooks_b`") && text.contains("dup_hooks_b::audit_async"), "{text}");
}
