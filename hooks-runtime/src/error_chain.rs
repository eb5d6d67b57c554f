//! An error and its causes as one line, for the messages of the HTTP clients (the OpenAI client,
//! settings hooks of the `http` type), where the cause is what names the failure.

/// An error and its causes, each once: `error sending request: ...: invalid peer certificate:
/// UnknownIssuer`, so a TLS or connection failure is named, not only "error sending request".
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut detail = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !detail.contains(&cause_text) {
            detail.push_str(": ");
            detail.push_str(&cause_text);
        }
        source = cause.source();
    }
    detail
}
