//! OpenTelemetry export of the runtime's spans (feature `otel`): runs (`invoke_agent`), model
//! calls (`chat`), tool calls (`execute_tool`) and hook runs, named as the GenAI semantic
//! conventions name them, sent over OTLP (HTTP/protobuf) to a collector or a backend such as
//! Arize Phoenix or Jaeger.
//!
//! The spans are plain `tracing` spans, there with or without this feature; this module adds
//! the exporter and the `tracing` layer that hands them to it. Two ways to set it up:
//!
//! - [`install`]: one call that sets the process's global subscriber, exporting the spans of the
//!   targets `hooks_runtime` and `hooks_server` at INFO, and printing logs as `RUST_LOG` says
//!   (WARN by default).
//! - [`OtlpExporter::layer`]: a layer for a subscriber you build yourself, beside your own
//!   layers and filters, as `tracing` users do.
//!
//! Either way, call [`OtlpExporter::shutdown`] before the process exits: spans are sent in
//! batches, and the last batch goes then.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! let exporter = hooks_runtime::otel::OtlpExporter::new("http://127.0.0.1:4318").unwrap();
//! tracing_subscriber::registry().with(exporter.layer()).with(tracing_subscriber::fmt::layer()).init();
//! // ... build the runtime, run threads ...
//! exporter.shutdown().unwrap();
//! ```
//!
//! With nothing listening (no subscriber, or one that filters the runtime's targets out), the
//! runtime builds none of these spans: each costs one check of its callsite.
//!
//! Message contents, tool arguments and results are not on the spans unless the application
//! opts in with [`RuntimeBuilder::trace_contents`](crate::RuntimeBuilder::trace_contents).
//! Log events are never exported, not even as span events: their messages quote what hooks
//! printed and what providers answered (H1). Logs go to your `fmt` layer (or any other).
//! A failure still shows on its span, as `error.type` and an error status.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider};
use opentelemetry_otlp::{Protocol, WithExportConfig};

/// How long one export may take, as OpenTelemetry's default (`OTEL_EXPORTER_OTLP_TIMEOUT`) has it.
#[cfg(feature = "mcp")]
const EXPORT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets, filter_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// The service name spans are reported under unless `OTEL_SERVICE_NAME` says otherwise.
const DEFAULT_SERVICE_NAME: &str = "hooks-runtime";

/// Why the exporter could not be set up, or could not send.
///
/// ```
/// let error = hooks_runtime::otel::OtlpExporter::new("127.0.0.1:4318").unwrap_err();
/// assert!(error.to_string().contains("http://127.0.0.1:4318"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The endpoint is not an `http://` or `https://` URL.
    #[error(
        "the OTLP endpoint `{endpoint}` is not an http:// or https:// URL; give the collector's base URL, such as http://127.0.0.1:4318 (spans go to its /v1/traces)"
    )]
    InvalidEndpoint {
        /// The endpoint as given.
        endpoint: String,
    },
    /// The OTLP exporter could not be built.
    #[error("the OTLP span exporter for `{endpoint}` could not be built: {source}")]
    Build {
        /// The endpoint.
        endpoint: String,
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Spans could not be sent, or the exporter could not be shut down.
    #[error("the spans could not be sent to `{endpoint}`: {source}")]
    Export {
        /// The endpoint.
        endpoint: String,
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// [`install`] found a global subscriber already set.
    #[error(
        "a global tracing subscriber is already set; add `OtlpExporter::layer()` to that subscriber instead of calling `otel::install`"
    )]
    SubscriberAlreadySet,
}

/// Sends spans over OTLP (HTTP/protobuf) to `{endpoint}/v1/traces`, in batches from a thread of
/// its own. Give [`OtlpExporter::layer`] to your subscriber; call [`OtlpExporter::shutdown`]
/// before exiting. See the [module](self).
///
/// ```no_run
/// let exporter = hooks_runtime::otel::OtlpExporter::new("http://127.0.0.1:4318").unwrap();
/// exporter.flush().unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct OtlpExporter {
    provider: SdkTracerProvider,
    endpoint: String,
}

impl OtlpExporter {
    /// An exporter to the collector at `endpoint`, its base URL (as `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// gives it: `http://127.0.0.1:4318`, to which `/v1/traces` is added). Spans are reported
    /// under the service name `OTEL_SERVICE_NAME`, `hooks-runtime` when unset.
    ///
    /// ```
    /// assert!(hooks_runtime::otel::OtlpExporter::new("http://127.0.0.1:4318").is_ok());
    /// ```
    pub fn new(endpoint: &str) -> Result<Self, OtelError> {
        let base = endpoint.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(OtelError::InvalidEndpoint { endpoint: endpoint.to_owned() });
        }
        let builder = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/traces"));
        // With feature `mcp`, reqwest 0.13 (which both use) has TLS without a built-in crypto
        // provider, and its default client would panic at build: the exporter gets a client
        // whose TLS is set up here, on ring, as the MCP client's is.
        #[cfg(feature = "mcp")]
        let builder = opentelemetry_otlp::WithHttpConfig::with_http_client(
            builder,
            crate::mcp::blocking_http_client(EXPORT_TIMEOUT)
                .map_err(|error| OtelError::Build { endpoint: endpoint.to_owned(), source: error.into() })?,
        );
        let exporter = builder
            .build()
            .map_err(|error| OtelError::Build { endpoint: endpoint.to_owned(), source: Box::new(error) })?;
        let service = std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| DEFAULT_SERVICE_NAME.to_owned());
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(Resource::builder().with_service_name(service).build())
            .build();
        Ok(OtlpExporter { provider, endpoint: endpoint.to_owned() })
    }

    /// The `tracing` layer that hands spans to this exporter. It exports every span its
    /// subscriber enables, and no log event (H1: events quote hook output and provider
    /// answers; see the [module](self)); add a filter (`Layer::with_filter`) to export fewer. The runtime's
    /// spans are at INFO, under the targets `hooks_runtime::agent`, `::model`, `::tool` and
    /// `::hook`.
    ///
    /// ```no_run
    /// use tracing_subscriber::Layer;
    /// use tracing_subscriber::filter::{LevelFilter, Targets};
    /// use tracing_subscriber::layer::SubscriberExt;
    ///
    /// let exporter = hooks_runtime::otel::OtlpExporter::new("http://127.0.0.1:4318").unwrap();
    /// let only_the_runtime = Targets::new().with_target("hooks_runtime", LevelFilter::INFO);
    /// let subscriber = tracing_subscriber::registry().with(exporter.layer().with_filter(only_the_runtime));
    /// # let _ = subscriber;
    /// ```
    pub fn layer<S>(&self) -> impl Layer<S> + Send + Sync + 'static
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
    {
        // H1: spans only. `tracing-opentelemetry` turns every event inside a span into a span
        // event carrying its message and fields, and the runtime's WARNs quote what hooks
        // printed and what providers answered: no event reaches the exporter. No `code.*`
        // attributes: the file path would be the build machine's (an absolute path for a git or
        // registry dependency), on every span.
        tracing_opentelemetry::layer()
            .with_location(false)
            .with_tracer(self.tracer())
            .with_filter(filter_fn(|metadata| metadata.is_span()))
    }

    fn tracer(&self) -> SdkTracer {
        self.provider.tracer("hooks-runtime")
    }

    /// Sends the spans that ended so far, and waits until they are sent; an error when the
    /// collector could not be reached or refused them (batches sent on the exporter's own
    /// schedule fail silently).
    pub fn flush(&self) -> Result<(), OtelError> {
        self.provider.force_flush().map_err(|error| self.export_error(error))
    }

    /// Sends the spans that ended so far and stops the exporter; later spans are dropped.
    pub fn shutdown(&self) -> Result<(), OtelError> {
        self.provider.shutdown().map_err(|error| self.export_error(error))
    }

    fn export_error(&self, error: opentelemetry_sdk::error::OTelSdkError) -> OtelError {
        OtelError::Export { endpoint: self.endpoint.clone(), source: Box::new(error) }
    }
}

/// Sets the process's global `tracing` subscriber: the spans of `hooks_runtime` and
/// `hooks_server` at INFO go to the collector at `endpoint` (see [`OtlpExporter::new`]), and
/// logs are printed to stderr as `RUST_LOG` says (WARN when unset). Returns the exporter, to
/// [`shutdown`](OtlpExporter::shutdown) before the process exits.
///
/// ```no_run
/// let exporter = hooks_runtime::otel::install("http://127.0.0.1:4318").unwrap();
/// // ... run threads ...
/// exporter.shutdown().unwrap();
/// ```
pub fn install(endpoint: &str) -> Result<OtlpExporter, OtelError> {
    let exporter = OtlpExporter::new(endpoint)?;
    let spans =
        Targets::new().with_target("hooks_runtime", LevelFilter::INFO).with_target("hooks_server", LevelFilter::INFO);
    let logs = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::registry()
        .with(exporter.layer().with_filter(spans))
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_filter(logs))
        .try_init()
        .map_err(|_| OtelError::SubscriberAlreadySet)?;
    Ok(exporter)
}

/// Makes `span` a child of the remote span that a W3C `traceparent` header names (with its
/// `tracestate`, when there is one), so that everything run inside `span` continues the
/// caller's trace. `false` when the header is not a valid `traceparent` or `span` is not
/// exported (no [`OtlpExporter::layer`] in its subscriber), and nothing changed.
///
/// ```
/// let span = tracing::info_span!("request");
/// let continued = hooks_runtime::otel::continue_trace(
///     &span,
///     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
///     None,
/// );
/// assert!(!continued, "no subscriber here exports the span");
/// ```
pub fn continue_trace(span: &tracing::Span, traceparent: &str, tracestate: Option<&str>) -> bool {
    let mut carrier = HashMap::with_capacity(2);
    carrier.insert("traceparent".to_owned(), traceparent.to_owned());
    if let Some(tracestate) = tracestate {
        carrier.insert("tracestate".to_owned(), tracestate.to_owned());
    }
    let context = TraceContextPropagator::new().extract(&carrier);
    if !context.span().span_context().is_valid() {
        return false;
    }
    span.set_parent(context).is_ok()
}

/// Sets a string-array attribute on `span`'s OpenTelemetry span (a `tracing` field holds one
/// value, the conventions' `gen_ai.response.finish_reasons` is an array).
pub(crate) fn set_string_array(span: &tracing::Span, key: &'static str, values: &[&str]) {
    let values = values.iter().map(|value| opentelemetry::StringValue::from(value.to_string())).collect();
    span.set_attribute(key, opentelemetry::Value::Array(opentelemetry::Array::String(values)));
}
