//! The real MCP servers the P tests run, as `.ci/mcp/install` installs them: found under
//! `HOOKS_MCP_SERVERS` (default `<workspace>/.ci/mcp`). A server that is not installed fails the
//! test with the command that installs it; nothing is skipped.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use hooks_runtime::mcp::McpTransport;

/// Where the servers are installed.
pub fn servers_dir() -> PathBuf {
    match std::env::var_os("HOOKS_MCP_SERVERS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/mcp"),
    }
}

fn installed(relative: &str) -> PathBuf {
    let path = servers_dir().join(relative);
    assert!(
        path.exists(),
        "the MCP test server {} is not installed; run `.ci/mcp/install` from the workspace root \
         (npm ci and a Python venv, a minute; HOOKS_MCP_SERVERS names another install folder)",
        path.display()
    );
    path
}

/// `@modelcontextprotocol/server-everything`'s entry point.
pub fn everything_js() -> PathBuf {
    installed("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// server-everything over stdio.
pub fn everything() -> McpTransport {
    McpTransport::stdio("node").arg(everything_js()).arg("stdio")
}

/// `@modelcontextprotocol/server-filesystem` over stdio, serving `root`.
pub fn filesystem(root: &Path) -> McpTransport {
    let js = installed("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    McpTransport::stdio("node").arg(js).arg(root)
}

/// The fastmcp server of `tests/mcp/failing_server.py` over stdio, writing its markers (a
/// cancelled call, the calls it recorded) to `markers`.
pub fn failing(markers: &Path) -> McpTransport {
    let python = installed("venv/bin/python");
    McpTransport::stdio(python).arg(failing_script()).env("MCP_MARKER_DIR", markers).env("FASTMCP_LOG_LEVEL", "WARNING")
}

/// The fastmcp server, started by a shell that first leaves a `sleep <duration>` behind in the
/// background: a grandchild of the runtime that ignores the end of stdin, as a server's helper
/// process may. Found by its argument `duration` (`500.<pid>`, say).
pub fn failing_with_a_helper(markers: &Path, duration: &str) -> McpTransport {
    let python = installed("venv/bin/python");
    McpTransport::stdio("sh")
        .args(["-c", &format!("sleep {duration} & exec \"$@\""), "sh"])
        .arg(python)
        .arg(failing_script())
        .env("MCP_MARKER_DIR", markers)
        .env("FASTMCP_LOG_LEVEL", "WARNING")
}

fn failing_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/failing_server.py")
}

/// A fresh folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hooks-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits until `done`, polling, for at most `limit`.
pub async fn eventually(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// server-everything over streamable HTTP on a free loopback port: the child (killed when
/// dropped) and the endpoint's URL, once it listens.
pub struct EverythingHttp {
    child: tokio::process::Child,
    pub url: String,
}

impl EverythingHttp {
    pub async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = tokio::process::Command::new("node")
            .arg(everything_js())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts server-everything (Node 18 or later on PATH)");
        let started = std::time::Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "server-everything did not listen on {port}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        EverythingHttp { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}
