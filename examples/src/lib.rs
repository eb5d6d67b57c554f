//! What the example programs share: their command-line options and the model those choose,
//! logging (with a line per hook run, for the tour), and printing messages and model requests.
//!
//! Every example runs on a scripted model by default: no network, no key, the same output each
//! time. With `--base-url` (or `OPENAI_BASE_URL` set) it talks to an OpenAI-compatible endpoint
//! instead:
//!
//! ```text
//! cargo run -p examples --bin duplicate_finder -- --base-url https://api.openai.com/v1 --model gpt-4o-mini
//! ```

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex, PoisonError};

use hooks_runtime::model::{
    Model, ModelError, ModelRequest, ModelStream, OpenAiConfig, OpenAiModel, ScriptedModel, ScriptedResponse,
};
use hooks_runtime::types::{HookMessage, LlmMessage};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer};

/// The model name sent to an endpoint when neither `--model` nor `OPENAI_MODEL` gives one.
pub const DEFAULT_ENDPOINT_MODEL: &str = "gpt-4o-mini";

const USAGE: &str = "\
Options:
  --base-url URL   talk to the OpenAI-compatible endpoint at URL (such as https://api.openai.com/v1)
                   instead of the scripted model (default: $OPENAI_BASE_URL)
  --model NAME     the model the endpoint should run (default: $OPENAI_MODEL, else gpt-4o-mini)
  --api-key KEY    the endpoint's API key (default: $OPENAI_API_KEY)
  -h, --help       print this help

Without --base-url or OPENAI_BASE_URL the example runs on a scripted model: no network, the same
output every time.";

/// The options every example takes: where the model is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `--base-url URL`: an OpenAI-compatible endpoint. `None`: the scripted model.
    pub base_url: Option<String>,
    /// `--model NAME`: the model the endpoint runs.
    pub model: Option<String>,
    /// `--api-key KEY`: overrides `OPENAI_API_KEY`.
    pub api_key: Option<String>,
}

impl Options {
    /// The options of this process's command line, with `OPENAI_BASE_URL` as the default of
    /// `--base-url`. Prints the help and exits on `--help`, and exits with status 2 on a bad
    /// option.
    pub fn from_args() -> Self {
        match Self::parse_with_env(std::env::args().skip(1), |name| std::env::var(name).ok()) {
            Ok(Some(options)) => options,
            Ok(None) => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            Err(error) => {
                eprintln!("error: {error}\n\n{USAGE}");
                std::process::exit(2);
            }
        }
    }

    /// Parses options (without the program name); `Ok(None)` means help was asked for.
    ///
    /// ```
    /// use examples::Options;
    ///
    /// let args = ["--base-url", "http://localhost:8080/v1", "--model=llama3"].map(String::from);
    /// let options = Options::parse(args).unwrap().unwrap();
    /// assert_eq!(options.base_url.as_deref(), Some("http://localhost:8080/v1"));
    /// assert_eq!(options.model.as_deref(), Some("llama3"));
    /// assert!(Options::parse(["--model".to_owned()]).is_err());
    /// ```
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Self>, String> {
        Self::parse_with_env(args, |_| None)
    }

    /// [`Options::parse`], with `OPENAI_BASE_URL` from `var` as the default of `--base-url`, as
    /// the README's environment variables promise.
    ///
    /// ```
    /// use examples::Options;
    ///
    /// let env = |name: &str| (name == "OPENAI_BASE_URL").then(|| "http://localhost:8080/v1".to_owned());
    /// let options = Options::parse_with_env(["--model=llama3".to_owned()], env).unwrap().unwrap();
    /// assert_eq!(options.base_url.as_deref(), Some("http://localhost:8080/v1"));
    /// assert!(!options.is_scripted());
    /// ```
    pub fn parse_with_env(
        args: impl IntoIterator<Item = String>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, String> {
        let mut options = Options::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.to_owned())),
                _ => (arg.clone(), None),
            };
            let slot = match flag.as_str() {
                "-h" | "--help" => return Ok(None),
                "--base-url" => &mut options.base_url,
                "--model" => &mut options.model,
                "--api-key" => &mut options.api_key,
                _ => return Err(format!("unknown option `{arg}`")),
            };
            let value = match inline {
                Some(value) => value,
                None => args.next().ok_or_else(|| format!("`{flag}` needs a value"))?,
            };
            if value.trim().is_empty() {
                return Err(format!("`{flag}` needs a non-empty value"));
            }
            *slot = Some(value);
        }
        if options.base_url.is_none() {
            options.base_url = var("OPENAI_BASE_URL").filter(|url| !url.trim().is_empty());
        }
        if options.base_url.is_none() && (options.model.is_some() || options.api_key.is_some()) {
            return Err("`--model` and `--api-key` only apply with `--base-url` (or `OPENAI_BASE_URL`)".to_owned());
        }
        Ok(Some(options))
    }

    /// Whether the example runs on its scripted model.
    pub fn is_scripted(&self) -> bool {
        self.base_url.is_none()
    }

    /// The model to run on: `script` played back in order, or the endpoint of `--base-url`
    /// (then `script` is not used).
    pub fn model(&self, script: impl IntoIterator<Item = ScriptedResponse>) -> ExampleModel {
        let Some(base_url) = &self.base_url else {
            return ExampleModel::new(ScriptedModel::new(script), "scripted model (no network)".to_owned());
        };
        let mut config = OpenAiConfig::from_env().with_base_url(base_url.as_str());
        if let Some(key) = &self.api_key {
            config = config.with_api_key(key.as_str());
        }
        let name = self
            .model
            .clone()
            .or_else(|| std::env::var("OPENAI_MODEL").ok().filter(|name| !name.trim().is_empty()))
            .unwrap_or_else(|| DEFAULT_ENDPOINT_MODEL.to_owned());
        // The explicit choice: `--model` wins over `OPENAI_MODEL`, which `from_env` read.
        let config = config.with_model(name.as_str());
        let description = format!("{name} at {}", config.base_url());
        ExampleModel::new(OpenAiModel::new(config), description)
    }
}

/// The model an example runs on. It keeps every request it was sent, so an example can show
/// what reached the model. On an endpoint, the `--model` name is sent in place of the prompt's
/// model name (`tool-reasoning` names a role, not a model an endpoint knows).
#[derive(Clone)]
pub struct ExampleModel {
    inner: Arc<dyn Model>,
    description: String,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
}

impl ExampleModel {
    fn new(inner: impl Model, description: String) -> Self {
        ExampleModel { inner: Arc::new(inner), description, requests: Arc::default() }
    }

    /// What the model is, for people: `scripted model (no network)` or `NAME at URL`.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Every request sent so far, as the runtime built it (after every hook).
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

#[hooks_runtime::async_trait]
impl Model for ExampleModel {
    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner).push(request.clone());
        self.inner.stream(request).await
    }
}

/// Logs to stdout: warnings, hook failures (`[Hooks] ✗`) and declarative `[HOOK]` lines.
/// `RUST_LOG` overrides the default filter.
pub fn init_logging() {
    init(false);
}

/// [`init_logging`], plus one line per hook run, printed when the hook's span closes:
///
/// ```text
///   hook redact_emails           before_store_tool_result   prompt:duplicate_finder    0.04 ms
/// ```
pub fn init_logging_with_hook_lines() {
    init(true);
}

fn init(hook_lines: bool) {
    let mut default = String::from("warn,hooks_runtime::declarative=info");
    if hook_lines {
        // The runtime makes its hook spans at INFO; they must be enabled to be printed.
        default.push_str(",hooks_runtime::hook=info");
    }
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let fmt =
        tracing_subscriber::fmt::layer().without_time().with_target(false).with_ansi(std::io::stdout().is_terminal());
    let _ = tracing_subscriber::registry().with(filter).with(fmt).with(hook_lines.then(HookLines::default)).try_init();
}

/// A `tracing` layer that prints one line per hook run: id, kind, source and duration, read
/// from the span the runtime opens around each hook (target `hooks_runtime::hook`).
#[derive(Debug, Default)]
pub struct HookLines {
    _private: (),
}

/// The fields of one hook span, filled as they are recorded.
#[derive(Debug, Default)]
struct HookSpanFields {
    id: String,
    kind: String,
    source: String,
    duration_us: Option<u64>,
}

impl Visit for HookSpanFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "hook.id" => self.id = value.to_owned(),
            "hook.kind" => self.kind = value.to_owned(),
            "hook.source" => self.source = value.to_owned(),
            _ => {}
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "duration_us" {
            self.duration_us = Some(value);
        }
    }

    /// The runtime records the duration as an `i64`, the integer OpenTelemetry attributes hold.
    fn record_i64(&mut self, field: &Field, value: i64) {
        if field.name() == "duration_us" {
            self.duration_us = u64::try_from(value).ok();
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, format!("{value:?}").trim_matches('"'));
    }
}

impl<S> Layer<S> for HookLines
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, context: Context<'_, S>) {
        if attributes.metadata().target() != "hooks_runtime::hook" {
            return;
        }
        let mut fields = HookSpanFields::default();
        attributes.record(&mut fields);
        if let Some(span) = context.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, context: Context<'_, S>) {
        if let Some(span) = context.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<HookSpanFields>()
        {
            values.record(fields);
        }
    }

    fn on_close(&self, id: Id, context: Context<'_, S>) {
        let Some(span) = context.span(&id) else { return };
        let extensions = span.extensions();
        let Some(fields) = extensions.get::<HookSpanFields>() else { return };
        let duration = fields.duration_us.map_or_else(|| "?".to_owned(), |us| format!("{:.2} ms", us as f64 / 1000.0));
        println!("  hook {:<28} {:<26} {:<26} {duration}", fields.id, fields.kind, fields.source);
    }
}

/// Prints a section heading.
pub fn heading(title: &str) {
    println!("\n=== {title} ===");
}

/// `text` cut to at most `max` characters, on one line.
pub fn shorten(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', "⏎");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A stored message on one line: role, then its text, its tool calls, or the tool and status
/// of a result; text cut to `max` characters.
pub fn describe_message(message: &HookMessage, max: usize) -> String {
    let mut line = format!("{:<9}  ", message.role.as_str());
    if let Some(calls) = &message.tool_calls {
        let calls: serde_json::Value = serde_json::from_str(calls).unwrap_or_default();
        let _ = write!(line, "{}", describe_calls(&calls, max));
    } else if let Some(call_id) = &message.tool_call_id {
        let tool = message.name.as_deref().unwrap_or("?");
        let status = message.extra_str("tool_status").unwrap_or("?");
        let _ = write!(line, "{tool} ({call_id}) {status}: {}", shorten(message.content.as_deref().unwrap_or(""), max));
    } else {
        let _ = write!(line, "{}", shorten(message.content.as_deref().unwrap_or(""), max));
    }
    line
}

/// A message of a model request on one line, as [`describe_message`] does for stored ones.
pub fn describe_llm_message(message: &LlmMessage, max: usize) -> String {
    let mut line = format!("{:<9}  ", message.role);
    if let Some(calls) = &message.tool_calls {
        let _ = write!(line, "{}", describe_calls(calls, max));
    } else if let Some(call_id) = &message.tool_call_id {
        let _ = write!(line, "({call_id}) {}", shorten(message.content.as_deref().unwrap_or(""), max));
    } else {
        let _ = write!(line, "{}", shorten(message.content.as_deref().unwrap_or(""), max));
    }
    line
}

/// `calls NAME ARGS; NAME ARGS` for a JSON array of tool calls in the spec's shape.
fn describe_calls(calls: &serde_json::Value, max: usize) -> String {
    let calls = calls.as_array().map(Vec::as_slice).unwrap_or_default();
    let described: Vec<String> = calls
        .iter()
        .map(|call| {
            let name = call["function"]["name"].as_str().unwrap_or("?");
            let arguments = call["function"]["arguments"].as_str().unwrap_or("");
            format!("{name} {}", shorten(arguments, max))
        })
        .collect();
    format!("calls {}", described.join("; "))
}
