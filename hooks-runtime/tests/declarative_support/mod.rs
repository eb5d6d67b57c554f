//! Shared helpers of the declarative hook tests: a tiny agent with an authorization check and a
//! tool-call loop, a recording executor, log capture and scratch directories.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use hooks_runtime::declarative::{FnExecutor, HookAction, HookContext, executor_fn};
use hooks_runtime::tool::{ToolCallListener, ToolCallListenerTarget, ToolCallOutcome};

/// An agent reduced to what the declarative hooks see: an id, one listener slot, an
/// authorization check and a tool-call loop that calls the listener only for allowed calls.
pub(crate) struct TestAgent {
    id: String,
    allowed: BTreeSet<String>,
    listener: Mutex<Option<Arc<dyn ToolCallListener>>>,
    /// How often `set_tool_call_listener` was called.
    pub(crate) listener_sets: AtomicUsize,
    /// What happened, in order: tool runs and denials, next to what the hooks record.
    pub(crate) journal: Journal,
}

/// A shared, ordered record of events.
pub(crate) type Journal = Arc<Mutex<Vec<String>>>;

/// Why a tool call did not return a result.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CallError {
    /// The authorization check refused the call; the tool did not run.
    Denied,
    /// The tool ran and failed.
    Failed(String),
}

impl TestAgent {
    /// An agent allowed to call the tools named in `allowed`.
    pub(crate) fn new(id: &str, allowed: &[&str], journal: Journal) -> Self {
        TestAgent {
            id: id.to_owned(),
            allowed: allowed.iter().map(|s| (*s).to_owned()).collect(),
            listener: Mutex::new(None),
            listener_sets: AtomicUsize::new(0),
            journal,
        }
    }

    /// Whether a listener is set.
    pub(crate) fn has_listener(&self) -> bool {
        self.listener.lock().unwrap().is_some()
    }

    /// One tool call as the runtime makes it: authorization check, listener before, tool,
    /// listener after with the outcome.
    pub(crate) async fn call_tool(
        &self,
        name: &str,
        tool: impl FnOnce() -> Result<String, String>,
    ) -> Result<String, CallError> {
        if !self.allowed.contains(name) {
            self.journal.lock().unwrap().push(format!("denied {name}"));
            return Err(CallError::Denied);
        }
        let listener = self.listener.lock().unwrap().clone();
        if let Some(listener) = &listener {
            listener.before_tool_call(name).await;
        }
        let started = Instant::now();
        self.journal.lock().unwrap().push(format!("tool {name}"));
        let result = tool();
        let outcome = match &result {
            Ok(_) => ToolCallOutcome::success(started.elapsed()),
            Err(error) => ToolCallOutcome::failure(started.elapsed(), error.clone()),
        };
        if let Some(listener) = &listener {
            listener.after_tool_call(name, &outcome).await;
        }
        result.map_err(CallError::Failed)
    }
}

impl ToolCallListenerTarget for TestAgent {
    fn agent_id(&self) -> &str {
        &self.id
    }

    fn set_tool_call_listener(&self, listener: Option<Arc<dyn ToolCallListener>>) {
        self.listener_sets.fetch_add(1, Ordering::SeqCst);
        *self.listener.lock().unwrap() = listener;
    }
}

/// A listener that only counts calls, to see whether it was replaced.
#[derive(Default)]
pub(crate) struct CountingListener {
    pub(crate) calls: AtomicUsize,
}

#[hooks_runtime::async_trait]
impl ToolCallListener for CountingListener {
    async fn before_tool_call(&self, _tool: &str) {
        self.calls.fetch_add(1, Ordering::SeqCst);
    }
    async fn after_tool_call(&self, _tool: &str, _outcome: &ToolCallOutcome) {
        self.calls.fetch_add(1, Ordering::SeqCst);
    }
}

/// An executor that writes `"<type> <template> <context>"` to `journal` for every action.
pub(crate) fn recorder(journal: &Journal) -> FnExecutor<impl Fn(&HookAction, &HookContext) + Send + Sync + 'static> {
    let journal = Arc::clone(journal);
    executor_fn(move |action: &HookAction, context: &HookContext| {
        journal.lock().unwrap().push(format!("{} {} {:?}", action.type_name(), action.template(), context));
    })
}

/// A fresh journal.
pub(crate) fn journal() -> Journal {
    Arc::new(Mutex::new(Vec::new()))
}

/// A context from pairs.
pub(crate) fn ctx(pairs: &[(&str, &str)]) -> HookContext {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// Log lines captured while the returned guard lives (current thread only, which is where
/// `#[tokio::test]` runs everything).
#[derive(Clone, Default)]
pub(crate) struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    /// Starts capturing every level, without time stamps or colours.
    pub(crate) fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .without_time()
            .with_target(true)
            .with_writer(move || writer.clone())
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    /// Starts capturing what an `EnvFilter` with `directives` lets through, as an application's
    /// `RUST_LOG` would.
    pub(crate) fn capture_filtered(directives: &str) -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(directives))
            .with_ansi(false)
            .without_time()
            .with_target(true)
            .with_writer(move || writer.clone())
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        // Interest is cached per call site: recompute it for this filter.
        tracing::callsite::rebuild_interest_cache();
        (logs, guard)
    }

    /// Everything captured so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// The captured events whose first line has `level` (`INFO`, `WARN`, ...), each with its
    /// continuation lines.
    pub(crate) fn events(&self, level: &str) -> Vec<String> {
        let text = self.text();
        let mut events: Vec<String> = Vec::new();
        let mut in_level = false;
        for line in text.lines() {
            let head = line.trim_start();
            let starts_event = ["TRACE ", "DEBUG ", "INFO ", "WARN ", "ERROR "].iter().any(|l| head.starts_with(l));
            if starts_event {
                in_level = head.starts_with(&format!("{level} "));
                if in_level {
                    events.push(line.to_owned());
                }
            } else if in_level && let Some(last) = events.last_mut() {
                last.push('\n');
                last.push_str(line);
            }
        }
        events
    }
}

impl io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// An empty directory of its own under the system temp dir, removed on drop.
pub(crate) struct ScratchDir(pub(crate) PathBuf);

impl ScratchDir {
    /// A new directory named after `name`.
    pub(crate) fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hooks-declarative-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        ScratchDir(dir)
    }

    /// A path inside the directory, as a string for shell commands.
    pub(crate) fn file(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_owned()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The path of a YAML fixture.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/declarative").join(name)
}
