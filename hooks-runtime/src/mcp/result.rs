//! An MCP tool result (`CallToolResult` on the wire) as the specification's tool result: its
//! text parts as the result text (or the error, when `isError`), images, audio and embedded
//! binary resources as new attachments, resource links as attachment references.

use hooks_core::{Attachment, AttachmentRef, ExtraFields, HookToolResult, ToolAttachment};
use serde_json::{Value, json};

/// Maps a `CallToolResult`, as its JSON, for the tool `tool` (which names the new files).
///
/// - `text` parts, and the text of embedded text resources, joined by newlines, are the result
///   (or, when `isError` is true, the error message);
/// - `image` and `audio` parts, and embedded blob resources, are new files
///   ([`Attachment::New`]), named `<tool>-<n>.<ext>`, with a line `[image: <name>]` in the text;
/// - `resource_link` parts are references ([`Attachment::Ref`]) whose path is the link's URI,
///   with a line `[resource: <uri>]` in the text;
/// - with no text at all, `structuredContent` (as JSON) is the text.
pub(super) fn tool_result(tool: &str, result: &Value) -> HookToolResult {
    let mut lines: Vec<String> = Vec::new();
    let mut attachments: Vec<Attachment> = Vec::new();
    let file = |kind: &str, mime: &str, data: &str, lines: &mut Vec<String>, attachments: &mut Vec<Attachment>| {
        let name = format!("{tool}-{}.{}", attachments.len() + 1, extension(mime));
        lines.push(format!("[{kind}: {name}]"));
        attachments.push(Attachment::New(ToolAttachment::new(name, mime, data)));
    };
    for part in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let text = |key: &str| part.get(key).and_then(Value::as_str).unwrap_or_default();
        match text("type") {
            "text" => lines.push(text("text").to_owned()),
            kind @ ("image" | "audio") => file(kind, text("mimeType"), text("data"), &mut lines, &mut attachments),
            "resource_link" => {
                let uri = text("uri");
                lines.push(format!("[resource: {uri}]"));
                let mut extra = ExtraFields::new();
                extra.insert("mcp_resource_link".into(), json!(true));
                if let Some(description) = part.get("description") {
                    extra.insert("description".into(), description.clone());
                }
                let mut reference = AttachmentRef::new(uri);
                reference.name = part.get("name").and_then(Value::as_str).map(str::to_owned);
                reference.mime_type = part.get("mimeType").and_then(Value::as_str).map(str::to_owned);
                reference.extra = extra;
                attachments.push(Attachment::Ref(reference));
            }
            "resource" => {
                let resource = part.get("resource").unwrap_or(&Value::Null);
                let field = |key: &str| resource.get(key).and_then(Value::as_str);
                match (field("text"), field("blob")) {
                    (Some(text), _) => lines.push(text.to_owned()),
                    (None, Some(blob)) => {
                        let mime = field("mimeType").unwrap_or("application/octet-stream");
                        file("resource", mime, blob, &mut lines, &mut attachments)
                    }
                    (None, None) => lines.push(format!("[resource: {}]", field("uri").unwrap_or_default())),
                }
            }
            other => lines.push(format!("[{other} content]")),
        }
    }
    let mut text = lines.join("\n");
    if text.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        text = structured.to_string();
    }
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let mut mapped = if is_error {
        HookToolResult::error(if text.is_empty() { format!("the MCP tool `{tool}` failed") } else { text })
    } else {
        HookToolResult::success(text)
    };
    if !attachments.is_empty() {
        mapped.attachments = Some(attachments);
    }
    mapped
}

/// H4: cuts `result` to `max` bytes the model reads: its text (result or error) at a character
/// boundary, with a note saying it was cut and from how many bytes, and its new attachments
/// past what is left of `max` dropped, with a line naming each.
pub(super) fn cap(result: &mut HookToolResult, max: usize) {
    let text = if result.error.is_some() { &mut result.error } else { &mut result.result };
    let mut used = 0;
    if let Some(text) = text {
        if text.len() > max {
            let total = text.len();
            let mut end = max;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str(&format!(
                "\n[the tool's output was cut here: it was {total} bytes, and only the first {end} are shown; ask for less, a narrower query or one page, to see the rest]"
            ));
        }
        used = text.len().min(max);
    }
    let Some(attachments) = &mut result.attachments else { return };
    let mut dropped = Vec::new();
    attachments.retain(|attachment| match attachment {
        Attachment::New(file) => {
            used = used.saturating_add(file.data.len());
            let keep = used <= max;
            if !keep {
                dropped.push(format!("\n[{} was dropped: the tool's output is over {max} bytes]", file.name));
            }
            keep
        }
        _ => true,
    });
    if attachments.is_empty() {
        result.attachments = None;
    }
    if let Some(text) = text {
        for line in dropped {
            text.push_str(&line);
        }
    }
}

/// A file extension for a media type: its subtype (`image/png` gives `png`), `bin` without one.
fn extension(mime: &str) -> &str {
    let subtype = mime.split_once('/').map_or("", |(_, subtype)| subtype);
    let subtype = subtype.split([';', '+']).next().unwrap_or_default();
    match subtype {
        "" | "octet-stream" => "bin",
        "jpeg" => "jpg",
        "mpeg" => "mp3",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hooks_core::ToolStatus;

    #[test]
    fn p2_text_images_links_and_embedded_resources_map_to_text_and_attachments() {
        let result = json!({
            "content": [
                {"type": "text", "text": "Here:"},
                {"type": "image", "data": "iVBORw0=", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "file:///tmp/a.txt", "name": "a.txt", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "test://1", "text": "inline text"}},
                {"type": "resource", "resource": {"uri": "test://2", "blob": "AAEC", "mimeType": "application/octet-stream"}},
            ]
        });
        let mapped = tool_result("mcp__s__t", &result);
        assert_eq!(mapped.status, ToolStatus::Success);
        assert_eq!(
            mapped.result.as_deref(),
            Some(
                "Here:\n[image: mcp__s__t-1.png]\n[resource: file:///tmp/a.txt]\ninline text\n[resource: mcp__s__t-3.bin]"
            )
        );
        let attachments = mapped.attachments.expect("attachments");
        assert!(
            matches!(&attachments[0], Attachment::New(file) if file.mime_type == "image/png" && file.data == "iVBORw0=")
        );
        assert!(
            matches!(&attachments[1], Attachment::Ref(link) if link.path == "file:///tmp/a.txt" && link.name.as_deref() == Some("a.txt"))
        );
        assert!(matches!(&attachments[2], Attachment::New(file) if file.data == "AAEC"));
    }

    #[test]
    fn p2_is_error_is_an_error_result_with_the_text_as_its_message() {
        let mapped = tool_result("t", &json!({"content": [{"type": "text", "text": "no such file"}], "isError": true}));
        assert_eq!(mapped.status, ToolStatus::Error);
        assert_eq!(mapped.error.as_deref(), Some("no such file"));
        let silent = tool_result("t", &json!({"content": [], "isError": true}));
        assert_eq!(silent.error.as_deref(), Some("the MCP tool `t` failed"));
    }

    #[test]
    fn h4_a_long_result_is_cut_with_a_note_the_model_reads() {
        let mut mapped = tool_result("t", &json!({"content": [{"type": "text", "text": "é".repeat(60)}]}));
        cap(&mut mapped, 101);
        let text = mapped.result.as_deref().unwrap();
        assert!(text.starts_with(&"é".repeat(50)), "cut at a character boundary: {text}");
        assert!(!text.starts_with(&"é".repeat(51)));
        assert!(text.contains("it was 120 bytes, and only the first 100 are shown"), "{text}");

        let short = json!({"content": [{"type": "text", "text": "short"}]});
        let mut mapped = tool_result("t", &short);
        cap(&mut mapped, 101);
        assert_eq!(mapped.result.as_deref(), Some("short"));

        let mut failed =
            tool_result("t", &json!({"content": [{"type": "text", "text": "e".repeat(300)}], "isError": true}));
        cap(&mut failed, 10);
        assert!(failed.error.as_deref().unwrap().contains("it was 300 bytes"));

        let image = json!({"content": [{"type": "text", "text": "Here:"}, {"type": "image", "data": "A".repeat(200), "mimeType": "image/png"}]});
        let mut mapped = tool_result("t", &image);
        cap(&mut mapped, 100);
        assert!(mapped.attachments.is_none());
        assert!(mapped.result.as_deref().unwrap().contains("[t-1.png was dropped"), "{:?}", mapped.result);
    }

    #[test]
    fn p2_structured_content_is_the_text_of_a_result_without_text() {
        let mapped = tool_result("t", &json!({"content": [], "structuredContent": {"sum": 3}}));
        assert_eq!(mapped.result.as_deref(), Some(r#"{"sum":3}"#));
    }
}
