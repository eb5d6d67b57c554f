//! A graceful shutdown (`serve_with_shutdown`): once its signal comes, the runtime's sessions
//! end (the settings file's `SessionEnd` hooks run) and the transcripts' folder is removed (H2).

use crate::support::{ALICE, PATIENCE, Server};

use std::path::{Path, PathBuf};

use hooks_runtime::Runtime;
use hooks_runtime::declarative::SettingsHooks;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_server::{ServerConfig, StaticTokens};
use serde_json::{Value, json};

define_prompt! {
    name: ending_prompt,
    model: "scripted",
    prompt: "Answer.",
}

define_agent! {
    name: ending_agent,
    side_a: { prompt: ending_prompt, stop_on_response: true, max_steps: 2 },
    side_b: { human: true },
}

/// A fresh directory for the hooks' marker files, removed at the end.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("hooks-server-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("scratch directory");
        ScratchDir(path)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `Stop` hook that notes the `transcript_path` it got (the transcript is written for it)
/// and a `SessionEnd` hook that notes its input and whether the transcript was still there.
fn settings(dir: &Path) -> SettingsHooks {
    let dir = dir.display();
    let stop = format!("jq -r .transcript_path > '{dir}/path'");
    let end = format!(
        "input=$(cat); printf '%s\\n' \"$input\" >> '{dir}/ended'; \
         test -f \"$(printf '%s' \"$input\" | jq -r .transcript_path)\" && touch '{dir}/transcript-at-end'"
    );
    let settings = json!({"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": stop}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": end}]}],
    }});
    SettingsHooks::from_json_strict(&settings.to_string()).expect("settings")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_a_graceful_shutdown_ends_the_sessions_and_removes_the_transcripts_folder() {
    let dir = ScratchDir::new("h2-shutdown");
    let runtime = Runtime::builder()
        .agent::<ending_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("Hello.")]))
        .settings_hooks(settings(&dir.0))
        .build()
        .expect("runtime");
    let config = ServerConfig::default().catalog(vec!["ending_agent".into()]);
    let auth = StaticTokens::new([(ALICE, "alice")]);
    let app = hooks_server::router_with(runtime.clone(), auth, config).expect("router");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
    let address = listener.local_addr().expect("local address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let signal = async {
        let _ = stopped.await;
    };
    // The application keeps a handle of its own: the shutdown, not the last drop, removes the folder.
    let kept = runtime.clone();
    let serving = tokio::spawn(hooks_server::serve_with_shutdown(listener, app, runtime, signal));
    let server = Server { base: format!("http://{address}"), client: reqwest::Client::new() };

    let id = server.create_thread(ALICE, "ending_agent").await;
    let mut stream = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    let (status, accepted) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Hi"}"#).await;
    assert_eq!(status, 202, "{accepted}");
    stream.until("run_finished").await;
    drop(stream);
    let transcript = PathBuf::from(std::fs::read_to_string(dir.0.join("path")).expect("the Stop hook ran").trim());
    assert!(transcript.is_file(), "the transcript was written for the hook: {}", transcript.display());
    let folder = transcript.parent().expect("the transcripts' folder").to_path_buf();
    assert!(!dir.0.join("ended").exists(), "no session ends while the server serves");

    stop.send(()).expect("the server waits for the signal");
    tokio::time::timeout(PATIENCE, serving).await.expect("the server stops").expect("serve task").expect("serve");

    let ended: Vec<Value> = std::fs::read_to_string(dir.0.join("ended"))
        .expect("the SessionEnd hook ran")
        .lines()
        .map(|line| serde_json::from_str(line).expect("the hook's input"))
        .collect();
    assert_eq!(ended.len(), 1, "{ended:#?}");
    assert_eq!((ended[0]["session_id"].as_str(), ended[0]["reason"].as_str()), (Some(id.as_str()), Some("other")));
    assert!(dir.0.join("transcript-at-end").exists(), "the SessionEnd hook read the transcript before its removal");
    assert!(!folder.exists(), "the transcripts' folder is removed: {}", folder.display());
    assert!(
        server.client.get(server.url("/agents")).send().await.is_err(),
        "the server accepts no connection after shutting down"
    );
    drop(kept);
}
