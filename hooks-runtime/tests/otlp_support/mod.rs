//! The OTLP receiver of the OpenTelemetry tests (`scripts/otlp_receiver.py`), started as a
//! child process: a real HTTP/protobuf endpoint that decodes each export with the official
//! `opentelemetry-proto` definitions and answers the spans it got on `GET /spans`.
//!
//! Its Python is `HOOKS_OTLP_PYTHON`, or the workspace's `.venv/otlp/bin/python`, which `.ci/run`
//! makes. Without it the tests fail, saying how to install it.
#![allow(dead_code)] // Each test binary that includes it uses part of it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// How to install the receiver's packages, for the failure message.
const INSTALL: &str =
    "python3 -m venv .venv/otlp && .venv/otlp/bin/pip install -r scripts/otlp_receiver.requirements.txt";

/// A running receiver; killed when dropped.
pub(crate) struct Receiver {
    child: Child,
    /// The base URL to give an OTLP exporter (`http://127.0.0.1:PORT`).
    pub(crate) endpoint: String,
    port: u16,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the crate is in the workspace").to_owned()
}

impl Receiver {
    /// Starts the receiver on a free port and waits until it accepts.
    pub(crate) fn start() -> Receiver {
        let root = workspace();
        let python = std::env::var_os("HOOKS_OTLP_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join(".venv/otlp/bin/python"));
        assert!(
            python.exists(),
            "the OTLP receiver's Python `{}` does not exist; at the workspace root run `{INSTALL}` (or set HOOKS_OTLP_PYTHON)",
            python.display()
        );
        let mut child = Command::new(&python)
            .arg(root.join("scripts/otlp_receiver.py"))
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|error| panic!("could not start `{}`: {error}", python.display()));
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line).expect("the receiver's first line");
        let Some(endpoint) = line.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            panic!("the OTLP receiver did not start (its error is above); install its packages with `{INSTALL}`");
        };
        let port = endpoint.rsplit(':').next().and_then(|port| port.parse().ok()).expect("a port");
        Receiver { child, endpoint: endpoint.to_owned(), port }
    }

    /// Every span received so far, as the receiver decoded it.
    pub(crate) fn spans(&self) -> Vec<Value> {
        serde_json::from_slice(&self.get("/spans")).expect("the spans as JSON")
    }

    /// Every request body received so far, as it came (protobuf), one after the other.
    pub(crate) fn raw(&self) -> Vec<u8> {
        self.get("/raw")
    }

    fn get(&self, path: &str) -> Vec<u8> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("the receiver accepts");
        write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).unwrap();
        let at = response.windows(4).position(|window| window == b"\r\n\r\n").expect("an HTTP response");
        let head = String::from_utf8_lossy(&response[..at]);
        assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "{head}");
        response[at + 4..].to_vec()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The spans named `name`.
pub(crate) fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|span| span["name"] == name).collect()
}

/// The one span named `name`.
pub(crate) fn one<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "one span `{name}` expected; got {}: {spans:#?}", found.len());
    found[0]
}
