//! The trust file: the SHA-256 of each file a project ships, recorded outside the project by
//! `hooks trust` ([`TrustStore::trust`]) and read by [`Discovery`](super::Discovery).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The environment variable that names the trust file, over
/// `$XDG_CONFIG_HOME/agent-hooks/trust.json` (`~/.config/agent-hooks/trust.json`).
///
/// ```
/// assert_eq!(hooks_runtime::declarative::TRUST_FILE_ENV, "AGENT_HOOKS_TRUST_FILE");
/// ```
pub const TRUST_FILE_ENV: &str = "AGENT_HOOKS_TRUST_FILE";

/// Where the person's trust decisions are kept: a JSON file outside every project, holding for
/// each trusted project folder the SHA-256 of each file it ships and what that file held
/// (its hooks, rules and MCP servers, to say what changed since). Written atomically (a
/// temporary file renamed over it), readable by its owner only (0600).
///
/// ```
/// use hooks_runtime::declarative::{Discovery, TrustStore};
///
/// let root = std::env::temp_dir().join(format!("doc-trust-{}", std::process::id()));
/// let project = root.join("repo");
/// std::fs::create_dir_all(project.join(".claude")).unwrap();
/// std::fs::write(project.join(".claude/settings.json"), r#"{"permissions": {"allow": ["Bash(ls:*)"]}}"#).unwrap();
/// let store = TrustStore::at(root.join("trust.json"));
/// let discovery = Discovery::new(&project).home_dir(root.join("home")).managed_settings(root.join("none.json")).trust_store(store.clone());
/// assert!(discovery.load().permissions().allow.is_empty()); // not trusted yet
/// assert_eq!(store.trust(&discovery.scan()).unwrap(), 1);
/// assert_eq!(discovery.load().permissions().allow.len(), 1);
/// # std::fs::remove_dir_all(&root).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
}

/// The trust file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct TrustDocument {
    version: u32,
    /// By canonical project folder.
    pub(super) projects: BTreeMap<String, ProjectRecord>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub(super) struct ProjectRecord {
    /// By path relative to the project folder.
    pub(super) files: BTreeMap<String, FileRecord>,
    /// F6: the pinned hash of each tool of each of its MCP servers, by server, then tool.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) mcp_tools: BTreeMap<String, BTreeMap<String, String>>,
    /// F6: tools withheld since, by server, then tool: their hash and description, which
    /// `hooks trust` shows and then pins.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) mcp_withheld: BTreeMap<String, BTreeMap<String, WithheldTool>>,
}

/// A tool withheld because it changed since its server was pinned.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct WithheldTool {
    pub(super) sha256: String,
    pub(super) description: String,
}

/// What a trusted file held when it was trusted.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct FileRecord {
    pub(super) sha256: String,
    /// The files inside the project that its commands name, by relative path: their SHA-256.
    #[serde(default)]
    pub(super) named: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) hooks: Vec<String>,
    #[serde(default)]
    pub(super) allow: Vec<String>,
    #[serde(default)]
    pub(super) ask: Vec<String>,
    #[serde(default)]
    pub(super) deny: Vec<String>,
    /// By server name: its command line or URL.
    #[serde(default)]
    pub(super) servers: BTreeMap<String, String>,
}

impl TrustStore {
    /// The trust file at `path` (it need not exist yet).
    pub fn at(path: impl Into<PathBuf>) -> Self {
        TrustStore { path: path.into() }
    }

    /// The trust file the environment names: [`TRUST_FILE_ENV`], else
    /// `$XDG_CONFIG_HOME/agent-hooks/trust.json`, else `$HOME/.config/agent-hooks/trust.json`;
    /// an error when none of them is set.
    ///
    /// ```
    /// use hooks_runtime::declarative::TrustStore;
    ///
    /// if let Ok(store) = TrustStore::from_env() {
    ///     assert!(store.path().ends_with("trust.json") || std::env::var_os("AGENT_HOOKS_TRUST_FILE").is_some());
    /// }
    /// ```
    pub fn from_env() -> Result<Self, String> {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
        if let Some(path) = var(TRUST_FILE_ENV) {
            return Ok(Self::at(path));
        }
        let config =
            var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|home| home.join(".config"))).ok_or_else(|| {
                format!("no trust file: set {TRUST_FILE_ENV}, XDG_CONFIG_HOME or HOME to say where it is kept")
            })?;
        Ok(Self::at(config.join("agent-hooks").join("trust.json")))
    }

    /// Where the trust file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Forgets the trust of the project folder `project_dir`; whether it was trusted.
    ///
    /// ```no_run
    /// use hooks_runtime::declarative::TrustStore;
    ///
    /// let was_trusted = TrustStore::from_env().unwrap().untrust(std::path::Path::new(".")).unwrap();
    /// # let _ = was_trusted;
    /// ```
    pub fn untrust(&self, project_dir: &Path) -> Result<bool, String> {
        let project = project_dir
            .canonicalize()
            .map_err(|error| format!("cannot open the project folder `{}`: {error}", project_dir.display()))?;
        let mut document = self.read()?;
        let removed = document.projects.remove(&project_key(&project)).is_some();
        if removed {
            self.write(document)?;
        }
        Ok(removed)
    }

    /// The project's record, if it was trusted.
    pub(super) fn project(&self, project_dir: &Path) -> Result<Option<ProjectRecord>, String> {
        Ok(self.read()?.projects.remove(&project_key(project_dir)))
    }

    /// Changes the record of the trusted project `project_dir` with `change`; an error when it
    /// is not trusted (any more).
    #[cfg(feature = "mcp")]
    fn update(&self, project_dir: &Path, change: impl FnOnce(&mut ProjectRecord)) -> Result<(), String> {
        let mut document = self.read()?;
        let record = document
            .projects
            .get_mut(&project_key(project_dir))
            .ok_or_else(|| format!("`{}` is not trusted (any more)", project_dir.display()))?;
        change(record);
        self.write(document)
    }

    /// The trust file's content; a missing file is an empty one.
    pub(super) fn read(&self) -> Result<TrustDocument, String> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(TrustDocument::default()),
            Err(error) => return Err(format!("cannot read the trust file `{}`: {error}", self.path.display())),
        };
        let document: TrustDocument = serde_json::from_str(&text).map_err(|error| {
            format!("the trust file `{}` is not valid: {error}; fix or remove it", self.path.display())
        })?;
        if document.version != 1 {
            return Err(format!(
                "the trust file `{}` has version {}; this version reads version 1",
                self.path.display(),
                document.version
            ));
        }
        Ok(document)
    }

    /// Writes `document` to a temporary file beside the trust file (0600), then renames it
    /// over the trust file, so a reader never sees half a file.
    pub(super) fn write(&self, mut document: TrustDocument) -> Result<(), String> {
        let failed = |what: &str, error: std::io::Error| {
            format!("cannot {what} the trust file `{}`: {error}", self.path.display())
        };
        let folder = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        create_private_dir(folder).map_err(|error| failed("create the folder of", error))?;
        document.version = 1;
        let mut text = serde_json::to_string_pretty(&document).expect("the trust document serializes");
        text.push('\n');
        let name =
            self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "trust.json".into());
        let temporary = folder.join(format!(".{name}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&temporary)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&temporary, &self.path)
        })();
        if let Err(error) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(failed("write", error));
        }
        Ok(())
    }
}

fn create_private_dir(folder: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(folder)
}

pub(super) fn project_key(project_dir: &Path) -> String {
    project_dir.to_string_lossy().into_owned()
}

/// What changed from `old` (as trusted) to `new` (as it is now), each change a phrase; empty
/// when nothing did.
pub(super) fn changes(old: &FileRecord, new: &FileRecord) -> Vec<String> {
    if old == new {
        return Vec::new();
    }
    let mut changes = Vec::new();
    let added = |before: &[String], after: &[String]| -> Vec<String> {
        after.iter().filter(|item| !before.contains(item)).cloned().collect()
    };
    for hook in added(&old.hooks, &new.hooks) {
        changes.push(format!("hook added: {hook}"));
    }
    for hook in added(&new.hooks, &old.hooks) {
        changes.push(format!("hook removed: {hook}"));
    }
    for rule in added(&old.allow, &new.allow) {
        changes.push(format!("allow rule added (loosens): `{rule}`"));
    }
    for (kind, before, after) in [("ask", &old.ask, &new.ask), ("deny", &old.deny, &new.deny)] {
        for rule in added(after, before) {
            changes.push(format!("{kind} rule removed (loosens): `{rule}`"));
        }
    }
    for (name, line) in &new.servers {
        match old.servers.get(name) {
            None => changes.push(format!("MCP server added: {name} ({line})")),
            Some(before) if before != line => {
                changes.push(format!("MCP server changed: {name} (was {before}, now {line})"))
            }
            Some(_) => {}
        }
    }
    for name in old.servers.keys().filter(|name| !new.servers.contains_key(*name)) {
        changes.push(format!("MCP server removed: {name}"));
    }
    for (path, hash) in &new.named {
        match old.named.get(path) {
            None => changes.push(format!("a command now names `{path}`, never trusted")),
            Some(before) if before != hash => changes.push(format!("`{path}`, which a command names, changed")),
            Some(_) => {}
        }
    }
    if changes.is_empty() {
        changes.push("its content changed".to_owned());
    }
    changes
}

/// F6: a project's MCP server's tool pins, kept in the trust file's record of the project.
#[cfg(feature = "mcp")]
pub(super) struct TrustFilePins {
    pub(super) store: TrustStore,
    pub(super) project: PathBuf,
    pub(super) server: String,
}

#[cfg(feature = "mcp")]
impl crate::mcp::PinRecord for TrustFilePins {
    fn pinned(&self) -> Result<Option<BTreeMap<String, String>>, String> {
        let record = self
            .store
            .project(&self.project)?
            .ok_or_else(|| format!("`{}` is not trusted (any more)", self.project.display()))?;
        Ok(record.mcp_tools.get(&self.server).cloned())
    }

    fn pin(&self, tools: &BTreeMap<String, String>) -> Result<(), String> {
        self.store.update(&self.project, |record| {
            record.mcp_tools.insert(self.server.clone(), tools.clone());
        })
    }

    fn withhold(&self, tool: &str, hash: &str, description: &str) -> Result<(), String> {
        self.store.update(&self.project, |record| {
            record
                .mcp_withheld
                .entry(self.server.clone())
                .or_default()
                .insert(tool.to_owned(), WithheldTool { sha256: hash.to_owned(), description: description.to_owned() });
        })
    }

    fn trust_command(&self) -> String {
        format!("hooks trust {}", self.project.display())
    }
}
