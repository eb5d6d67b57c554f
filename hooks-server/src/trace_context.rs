//! W3C trace context (feature `otel`, V3): a request with a `traceparent` header runs in a
//! `hooks_server_request` span whose parent is the caller's span, so that the run it starts
//! (its `hooks_server_run` span, and the runtime's `invoke_agent`, `chat`, `execute_tool` and
//! hook spans under it) continues the caller's trace when the spans are exported
//! (`hooks_runtime::otel`). A request without the header runs as before, with no span.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

/// The middleware: continues the trace of the request's `traceparent` (and `tracestate`).
pub(crate) async fn continue_trace(request: Request, next: Next) -> Response {
    let Some(traceparent) = header(&request, "traceparent") else { return next.run(request).await };
    let tracestate = header(&request, "tracestate");
    let span = tracing::info_span!(
        target: "hooks_server",
        "hooks_server_request",
        otel.name = format!("{} {}", request.method(), request.uri().path()),
        otel.kind = "server",
        http.request.method = %request.method(),
        url.path = request.uri().path(),
    );
    hooks_runtime::otel::continue_trace(&span, &traceparent, tracestate.as_deref());
    next.run(request).instrument(span).await
}

/// A header's value as text, owned: no borrow of the request (whose body is not `Sync`) is held
/// across the handler's await.
fn header(request: &Request, name: &str) -> Option<String> {
    request.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_owned)
}
