//! The crates a release publishes are exactly the four library crates, and each carries what the
//! registry shows and the license requires. `cargo publish --workspace --dry-run` in CI checks
//! that they package and build; this checks what it does not: a missing license file, keyword or
//! category, or a new workspace member that is publishable by accident.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const PUBLISHED: [&str; 4] = ["hooks-runtime", "hooks-runtime-core", "hooks-runtime-macros", "hooks-server"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is in the workspace").to_path_buf()
}

fn metadata() -> Value {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(workspace())
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

/// `publish = false` is an empty list of registries; no `publish` key is `null` (any registry).
fn is_published(package: &Value) -> bool {
    package["publish"].as_array().is_none_or(|registries| !registries.is_empty())
}

#[test]
fn only_the_four_library_crates_are_publishable() {
    let metadata = metadata();
    let publishable: BTreeSet<&str> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|package| is_published(package))
        .map(|package| package["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        publishable,
        BTreeSet::from(PUBLISHED),
        "a workspace member that is not a library for users needs `publish = false` in its Cargo.toml"
    );
}

#[test]
fn every_published_crate_has_the_registry_metadata_and_both_license_files() {
    let root = workspace();
    let metadata = metadata();
    for package in metadata["packages"].as_array().expect("packages").iter().filter(|package| is_published(package)) {
        let name = package["name"].as_str().expect("a name");
        let dir = Path::new(package["manifest_path"].as_str().expect("a manifest path")).parent().expect("a folder");
        for field in ["description", "repository", "rust_version", "readme"] {
            assert!(package[field].as_str().is_some_and(|text| !text.is_empty()), "`{name}` has no `{field}`");
        }
        assert_eq!(package["license"], "MIT OR Apache-2.0", "`{name}`'s license");
        let keywords = package["keywords"].as_array().map_or(0, Vec::len);
        assert!((1..=5).contains(&keywords), "`{name}` has {keywords} keywords; the registry takes 1 to 5");
        assert!(package["categories"].as_array().is_some_and(|list| !list.is_empty()), "`{name}` has no category");
        let readme = dir.join(package["readme"].as_str().expect("a readme"));
        assert!(readme.is_file(), "`{name}`'s readme {} is missing", readme.display());
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            let text = fs::read_to_string(dir.join(license))
                .unwrap_or_else(|error| panic!("`{name}` lacks {license} in {}: {error}", dir.display()));
            let original = fs::read_to_string(root.join(license)).expect("the workspace's license file");
            assert_eq!(text, original, "`{name}`'s {license} differs from the workspace's");
        }
    }
}
