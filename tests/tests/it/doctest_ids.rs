//! Each crate's doctests define every hook id once. rustdoc (edition 2024) builds all of a crate's
//! doctests as one crate, and `#[hook]` defines a `#[macro_export]` marker per id, so two doctests
//! with one id fail that build; rustdoc then compiles and links every doctest of the crate as a
//! program of its own, which costs hooks-runtime's about a minute of the test run.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    fs::canonicalize(manifest.parent().expect("tests/ is in the workspace")).expect("the workspace exists")
}

fn files(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, extension, out);
        } else if path.extension().is_some_and(|ext| ext == extension) {
            out.push(path);
        }
    }
}

/// The text of the doc comments of a Rust file, or the whole of a Markdown file.
fn doc_text(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    if path.extension().is_some_and(|ext| ext == "md") {
        return text;
    }
    let mut docs = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(doc) = trimmed.strip_prefix("///").or_else(|| trimmed.strip_prefix("//!")) {
            docs.push_str(doc);
            docs.push('\n');
        }
    }
    docs
}

/// Whether a code block with this info string is Rust that rustdoc merges.
fn is_merged(info: &str) -> bool {
    info.split([',', ' '])
        .filter(|token| !token.is_empty())
        .all(|token| matches!(token, "rust" | "no_run" | "should_panic" | "edition2021" | "edition2024"))
}

/// The code blocks of `markdown` that rustdoc builds into the crate's one doctest crate: Rust
/// blocks that are neither `ignore`d nor built alone (`compile_fail`, `standalone_crate`).
fn merged_code(markdown: &str) -> String {
    let mut code = String::new();
    let mut inside: Option<bool> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            inside = match inside {
                Some(_) => None,
                None => Some(is_merged(info)),
            };
        } else if inside == Some(true) {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// The ids of the `#[hook(...)]` attributes in `text`.
fn hook_ids(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for (start, _) in text.match_indices("#[hook(") {
        let attribute = &text[start..];
        let attribute = &attribute[..attribute.find(")]").unwrap_or(attribute.len())];
        if let Some(after) = attribute.split("id = \"").nth(1)
            && let Some(id) = after.split('"').next()
        {
            ids.push(id.to_owned());
        }
    }
    ids
}

/// Every id defined by more than one doctest among `paths`, with the files that define it.
fn duplicates(root: &Path, paths: &[PathBuf]) -> Vec<String> {
    let mut by_id: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in paths {
        let relative = path.strip_prefix(root).unwrap_or(path).to_string_lossy().into_owned();
        for id in hook_ids(&merged_code(&doc_text(path))) {
            by_id.entry(id).or_default().push(relative.clone());
        }
    }
    by_id.into_iter().filter(|(_, at)| at.len() > 1).map(|(id, at)| format!("`{id}` in {}", at.join(", "))).collect()
}

#[test]
fn each_crates_doctests_define_a_hook_id_once() {
    let root = workspace();
    let mut problems = Vec::new();
    for krate in ["hooks-core", "hooks-runtime", "hooks-server", "examples"] {
        let mut paths = Vec::new();
        files(&root.join(krate).join("src"), "rs", &mut paths);
        problems.extend(duplicates(&root, &paths).into_iter().map(|dup| format!("{krate}: {dup}")));
    }
    // The `tests` crate's doctests are the files its lib.rs includes: the READMEs, the guides and
    // the macros' docs.
    let lib = fs::read_to_string(root.join("tests/src/lib.rs")).expect("tests/src/lib.rs");
    let included: Vec<PathBuf> = lib
        .split("include_str!(\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter_map(|relative| fs::canonicalize(root.join("tests/src").join(relative)).ok())
        .collect();
    assert!(included.len() > 10, "tests/src/lib.rs includes {} files", included.len());
    problems.extend(duplicates(&root, &included).into_iter().map(|dup| format!("tests: {dup}")));
    assert!(
        problems.is_empty(),
        "doctests of one crate define a hook id twice, which makes rustdoc build each doctest on its \
         own; give each its own id:\n{}",
        problems.join("\n")
    );
}

#[test]
fn only_blocks_of_the_merged_doctest_crate_count() {
    let markdown = "```\n#[hook(a, id = \"x\")]\n```\n```rust,no_run\n#[hook(a, id = \"y\")]\n```\n\
                    ```text\n#[hook(a, id = \"z\")]\n```\n```compile_fail\n#[hook(a, id = \"w\")]\n```\n";
    assert_eq!(hook_ids(&merged_code(markdown)), ["x", "y"]);
}

#[test]
fn hook_ids_are_read_from_the_attribute() {
    let text = "#[hook(filter_messages, id = \"last_20\")]\nfn a() {}\n#[hook(on_error)]\n#[hook(x, id = \"b\")]";
    assert_eq!(hook_ids(text), ["last_20", "b"]);
}
