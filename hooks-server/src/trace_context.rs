//! W3C trace context (feature `otel`, V3): a request with a `traceparent` header runs in a
//! `hooks_server_request` span whose parent is the caller's span, so that the run it starts
//! (its `hooks_server_run` span, and the runtime's `invoke_agent`, `chat`, `execute_tool` and
//! hook spans under it) continues the caller's trace when the spans are exported
//! (`hooks_runtime::otel`). A request without the header runs as before, with no span.
//!
//! H6: the caller chooses the trace, not whether the runs are exported. Unless
//! [`ServerConfig::honor_unsampled_traceparent`](crate::ServerConfig::honor_unsampled_traceparent)
//! is set, the header's sampled flag is taken as set: a client sending flags `00` still joins
//! its trace, and its runs are exported as anyone's.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

/// The middleware: continues the trace of the request's `traceparent` (and `tracestate`); with
/// `honor_unsampled` false, as sampled whatever its flags say.
pub(crate) async fn continue_trace(honor_unsampled: bool, request: Request, next: Next) -> Response {
    let Some(mut traceparent) = header(&request, "traceparent") else { return next.run(request).await };
    if !honor_unsampled {
        traceparent = sampled(&traceparent);
    }
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

/// `traceparent` with its sampled flag (bit 0 of `trace-flags`) set; any other value as it was
/// (an invalid header continues no trace either way).
fn sampled(traceparent: &str) -> String {
    let parts: Vec<&str> = traceparent.trim().split('-').collect();
    match parts.as_slice() {
        [version, trace, span, flags] if flags.len() == 2 => match u8::from_str_radix(flags, 16) {
            Ok(flags) => format!("{version}-{trace}-{span}-{:02x}", flags | 0x01),
            Err(_) => traceparent.to_owned(),
        },
        _ => traceparent.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::sampled;

    #[test]
    fn h6_the_sampled_flag_is_set_and_the_rest_kept() {
        let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7";
        assert_eq!(sampled(&format!("{trace}-00")), format!("{trace}-01"));
        assert_eq!(sampled(&format!("{trace}-01")), format!("{trace}-01"));
        assert_eq!(sampled(&format!("{trace}-02")), format!("{trace}-03"));
        assert_eq!(sampled("not a traceparent"), "not a traceparent");
        assert_eq!(sampled(&format!("{trace}-zz")), format!("{trace}-zz"));
    }
}
