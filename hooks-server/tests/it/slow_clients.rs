//! `HttpServer` against clients that hold connections: slowloris (headers begun, never
//! finished), silent sockets, and more connections than the cap. The timeouts are short here;
//! the defaults are 10 s (headers) and 60 s (idle).

use std::time::{Duration, Instant};

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_server::{HttpServer, ServerConfig, StaticTokens};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

define_prompt! {
    name: quiet_prompt,
    model: "scripted",
    prompt: "Answer.",
}

define_agent! {
    name: quiet_agent,
    side_a: { prompt: quiet_prompt, stop_on_response: true, max_steps: 2 },
    side_b: { human: true },
}

const TOKEN: &str = "token-alice";

/// Serves a router through `server` on a free port; its address.
async fn start(server: impl FnOnce(axum::Router) -> HttpServer, config: ServerConfig) -> String {
    let runtime = Runtime::builder()
        .agent::<quiet_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("Hello.")]))
        .build()
        .expect("runtime");
    let app = hooks_server::router_with(runtime, StaticTokens::new([(TOKEN, "alice")]), config).expect("router");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
    let address = listener.local_addr().expect("local address").to_string();
    let server = server(app);
    tokio::spawn(async move { server.serve(listener).await.expect("serve") });
    address
}

/// A valid request on a new connection: its status, within `patience`.
async fn valid_request(address: &str, patience: Duration) -> u16 {
    let request = reqwest::Client::new()
        .get(format!("http://{address}/agents"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .timeout(patience)
        .send();
    request.await.expect("a valid request is answered").status().as_u16()
}

/// Reads until the server closes the socket; what it sent, or `None` if it was still open
/// after `patience`.
async fn read_to_close(socket: &mut TcpStream, patience: Duration) -> Option<Vec<u8>> {
    let mut received = Vec::new();
    tokio::time::timeout(patience, async {
        let mut buffer = [0u8; 1024];
        loop {
            match socket.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
    .ok()
    .map(|()| received)
}

/// Raises this process's soft open-file limit to at least `wanted` (within the hard limit):
/// the slowloris test holds both ends of its connections.
fn raise_open_file_limit(wanted: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    if soft < wanted {
        setrlimit(Resource::RLIMIT_NOFILE, wanted.min(hard), hard).expect("setrlimit");
    }
    let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    assert!(soft >= wanted, "the open-file limit is {soft} (hard {hard}); this test needs {wanted}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_slowloris_connections_are_closed_by_the_header_timeout_while_valid_requests_are_served() {
    raise_open_file_limit(2600);
    let header_timeout = Duration::from_secs(1);
    let address = start(
        |app| HttpServer::new(app).header_read_timeout(header_timeout).max_connections(1100),
        ServerConfig::default(),
    )
    .await;
    let mut slow = Vec::new();
    for _ in 0..1000 {
        let mut socket = TcpStream::connect(&address).await.expect("connect");
        socket.write_all(b"GET /agents HTTP/1.1\r\nhost: x\r\nx-slow: ").await.expect("write a partial header");
        slow.push(socket);
    }
    let opened = Instant::now();
    // Served while the thousand hang.
    assert_eq!(valid_request(&address, Duration::from_secs(5)).await, 200);
    let served_in = opened.elapsed();

    let mut open_after = 0;
    for socket in &mut slow {
        // Their timers started as they were accepted, before `opened`.
        let left = (header_timeout + Duration::from_secs(5)).saturating_sub(opened.elapsed());
        if read_to_close(socket, left).await.is_none() {
            open_after += 1;
        }
    }
    let all_closed_in = opened.elapsed();
    assert_eq!(open_after, 0, "slowloris connections still open {all_closed_in:?} after the last one began");
    println!(
        "1,000 slowloris connections: a valid request served in {served_in:?}; all closed within {all_closed_in:?}"
    );
    assert_eq!(valid_request(&address, Duration::from_secs(5)).await, 200);
}

// Paused time: tokio's clock moves only when the server and the clients all wait, so a wait on
// it returns once the server has accepted every connection it was offered.
#[tokio::test(start_paused = true)]
async fn connections_beyond_the_cap_are_refused_at_once_not_queued() {
    let address = start(
        |app| HttpServer::new(app).header_read_timeout(Duration::from_secs(30)).max_connections(20),
        ServerConfig::default(),
    )
    .await;
    let mut idle = Vec::new();
    for _ in 0..20 {
        idle.push(TcpStream::connect(&address).await.expect("connect"));
    }
    // Once every task waits, the server has accepted all twenty.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut beyond = TcpStream::connect(&address).await.expect("connect beyond the cap");
    // Refused, not queued: the answer comes before the 30 s header timeout of the twenty.
    let answer = read_to_close(&mut beyond, Duration::from_secs(5)).await.expect("closed, not left waiting");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");

    drop(idle);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let response = reqwest::Client::new()
            .get(format!("http://{address}/agents"))
            .header("authorization", format!("Bearer {TOKEN}"))
            .timeout(Duration::from_secs(5))
            .send()
            .await;
        match response {
            Ok(response) if response.status() == 200 => break,
            _ => assert!(Instant::now() < deadline, "the freed places were never reused"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// Paused time: the idle timeout and the keep-alives are timers of tokio's clock, which jumps from
// one to the next whenever the server and the client both wait.
#[tokio::test(start_paused = true)]
async fn a_silent_connection_is_closed_by_the_idle_timeout_and_an_event_stream_is_not() {
    let idle = Duration::from_millis(500);
    let config = ServerConfig::default().keep_alive(Duration::from_millis(100));
    let address =
        start(|app| HttpServer::new(app).header_read_timeout(Duration::from_secs(30)).idle_timeout(idle), config).await;
    let create = reqwest::Client::new()
        .post(format!("http://{address}/threads"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .body(r#"{"agent":"quiet_agent"}"#)
        .send()
        .await
        .expect("create a thread");
    assert_eq!(create.status(), 201);
    let created: serde_json::Value = serde_json::from_str(&create.text().await.expect("body")).expect("JSON");
    let id = created["id"].as_str().expect("id").to_owned();

    let mut stream = TcpStream::connect(&address).await.expect("connect");
    let request = format!("GET /threads/{id}/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {TOKEN}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("ask for the event stream");

    let started = tokio::time::Instant::now();
    let mut silent = TcpStream::connect(&address).await.expect("connect");
    assert!(read_to_close(&mut silent, Duration::from_secs(5)).await.is_some(), "the silent socket stays open");
    // On the paused clock: closed by the idle timer, not before it.
    assert!(tokio::time::Instant::now() >= started + idle, "closed before the idle timeout");

    // Three idle timeouts later the stream is still open: its keep-alive comments are activity.
    tokio::time::sleep(idle * 2).await;
    let mut received = vec![0u8; 64 * 1024];
    let n = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut received))
        .await
        .expect("the stream writes keep-alives")
        .expect("read the stream");
    assert!(n > 0, "the event stream was closed as idle");
}
