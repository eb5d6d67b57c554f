//! Serving a router over TCP with the bounds a public HTTP service needs: [`HttpServer`].
//!
//! `axum::serve` waits for a request's headers, and for the next request on a kept-alive
//! connection, as long as the client likes, and accepts every connection. Here hyper's HTTP/1
//! connection reads each request's headers within [`HttpServer::header_read_timeout`] (which
//! also bounds the wait for the next request of a kept-alive connection), a connection that
//! moves no byte either way for [`HttpServer::idle_timeout`] while no request is being answered
//! is closed, and past [`HttpServer::max_connections`] a new connection is answered `503` and
//! closed at once instead of waiting. Request bodies are bounded by the router
//! ([`ServerConfig::body_read_timeout`](crate::ServerConfig::body_read_timeout)).
//!
//! [`HttpServer::serve_with_shutdown`] stops on a signal: it accepts no more connections,
//! lets the requests being answered finish (within [`HttpServer::shutdown_grace`]), closes
//! the connections, then ends the sessions of the runtime given to
//! [`HttpServer::shutdown_runtime`] (its settings file's `SessionEnd` hooks run) and removes
//! its transcripts' folder (`Runtime::shutdown`).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hooks_runtime::Runtime;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tower_service::Service;

use crate::user_limits::ConnectionClaim;

/// What a connection past the cap gets before it is closed.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";

/// Serves `router` on `listener` with the default bounds of [`HttpServer`]; runs until the
/// listener fails for good.
///
/// ```no_run
/// use hooks_runtime::Runtime;
/// use hooks_server::StaticTokens;
///
/// # async fn run(runtime: Runtime) -> std::io::Result<()> {
/// let app = hooks_server::router(runtime, StaticTokens::new([("dev-token", "alice")]));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// hooks_server::serve(listener, app).await
/// # }
/// ```
pub async fn serve(listener: TcpListener, router: Router) -> io::Result<()> {
    HttpServer::new(router).serve(listener).await
}

/// Serves `router` on `listener` with the default bounds of [`HttpServer`] until `signal`
/// completes, then shuts down gracefully: no new connection is accepted, the requests being
/// answered finish (within 10 s), and `runtime`'s sessions are ended (its settings file's
/// `SessionEnd` hooks run) and its transcripts' folder removed (`Runtime::shutdown`).
///
/// ```no_run
/// use hooks_runtime::Runtime;
/// use hooks_server::StaticTokens;
///
/// # async fn run(runtime: Runtime, stop: tokio::sync::oneshot::Receiver<()>) -> std::io::Result<()> {
/// let app = hooks_server::router(runtime.clone(), StaticTokens::new([("dev-token", "alice")]));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// // In a binary, a future of `tokio::signal` (ctrl-c, SIGTERM).
/// let ctrl_c = async {
///     let _ = stop.await;
/// };
/// hooks_server::serve_with_shutdown(listener, app, runtime, ctrl_c).await
/// # }
/// ```
pub async fn serve_with_shutdown(
    listener: TcpListener,
    router: Router,
    runtime: Runtime,
    signal: impl Future<Output = ()> + Send,
) -> io::Result<()> {
    HttpServer::new(router).shutdown_runtime(runtime).serve_with_shutdown(listener, signal).await
}

/// An HTTP/1.1 server for a router, with header, idle and connection bounds.
///
/// ```no_run
/// use std::time::Duration;
/// use hooks_runtime::Runtime;
/// use hooks_server::{HttpServer, StaticTokens};
///
/// # async fn run(runtime: Runtime) -> std::io::Result<()> {
/// let app = hooks_server::router(runtime, StaticTokens::new([("dev-token", "alice")]));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// HttpServer::new(app)
///     .header_read_timeout(Duration::from_secs(5))
///     .idle_timeout(Duration::from_secs(120))
///     .max_connections(2_000)
///     .serve(listener)
///     .await
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct HttpServer {
    router: Router,
    header_read_timeout: Duration,
    idle_timeout: Duration,
    max_connections: usize,
    shutdown_grace: Duration,
    runtime: Option<Runtime>,
}

impl HttpServer {
    /// A server for `router`: headers within 10 s, connections idle for 60 s closed, at most
    /// 512 connections (below the common limit of 1,024 open files, with room for the store).
    pub fn new(router: Router) -> Self {
        HttpServer {
            router,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
            shutdown_grace: Duration::from_secs(10),
            runtime: None,
        }
    }

    /// How long a client has to send a request's headers, and, on a kept-alive connection,
    /// to start the next request (default 10 s); then the connection is closed.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a connection may move no byte in either direction while no request is being
    /// answered (default 60 s); then it is closed. Keep it above
    /// [`ServerConfig::keep_alive`](crate::ServerConfig::keep_alive), which an idle event
    /// stream writes at, so that open streams stay open; a client that stopped reading one is
    /// closed after it.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How many connections are served at once (default 512); a connection beyond is answered
    /// `503 Service Unavailable` and closed. Keep it below the process's open-file limit
    /// (`ulimit -n`) minus what the store uses.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// How long [`serve_with_shutdown`](Self::serve_with_shutdown) lets the requests being
    /// answered finish once its signal came (default 10 s); then the connections still open
    /// (event streams, say) are closed.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The runtime the router serves, shut down (`Runtime::shutdown`: its sessions ended,
    /// its transcripts' folder removed) by [`serve_with_shutdown`](Self::serve_with_shutdown)
    /// once the connections are closed.
    ///
    /// ```no_run
    /// use hooks_runtime::Runtime;
    /// use hooks_server::{HttpServer, StaticTokens};
    ///
    /// # async fn run(runtime: Runtime, stop: tokio::sync::oneshot::Receiver<()>) -> std::io::Result<()> {
    /// let app = hooks_server::router(runtime.clone(), StaticTokens::new([("dev-token", "alice")]));
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// // In a binary, a future of `tokio::signal` (ctrl-c, SIGTERM).
    /// let ctrl_c = async {
    ///     let _ = stop.await;
    /// };
    /// HttpServer::new(app).shutdown_runtime(runtime).serve_with_shutdown(listener, ctrl_c).await
    /// # }
    /// ```
    pub fn shutdown_runtime(mut self, runtime: Runtime) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// Accepts and serves connections until the listener fails with an error that is not
    /// about one connection.
    pub async fn serve(self, listener: TcpListener) -> io::Result<()> {
        self.serve_with_shutdown(listener, std::future::pending()).await
    }

    /// Accepts and serves connections until `signal` completes (or the listener fails with an
    /// error that is not about one connection), then shuts down gracefully: accepts no more
    /// connections, closes the idle ones, lets the requests being answered finish within
    /// [`shutdown_grace`](Self::shutdown_grace), closes what is still open, and then shuts
    /// down the runtime given to [`shutdown_runtime`](Self::shutdown_runtime).
    pub async fn serve_with_shutdown(
        self,
        listener: TcpListener,
        signal: impl Future<Output = ()> + Send,
    ) -> io::Result<()> {
        let max_connections = self.max_connections;
        let grace = self.shutdown_grace;
        let runtime = self.runtime.clone();
        let slots = Arc::new(Semaphore::new(max_connections));
        let (closing, closed) = watch::channel(false);
        let bounds = Arc::new(self);
        tokio::pin!(signal);
        loop {
            let accepted = tokio::select! {
                () = signal.as_mut() => break,
                accepted = listener.accept() => accepted,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(error) if is_connection_error(&error) => continue,
                Err(error) => {
                    // Out of descriptors, most likely: wait for connections to close rather
                    // than spin.
                    tracing::error!(target: "hooks_server", "accepting a connection failed: {error}; retrying in 1 s");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                // Best effort, never waiting: a client that does not read gets the close only.
                let _ = stream.try_write(REFUSAL);
                continue;
            };
            let bounds = bounds.clone();
            let closed = closed.clone();
            tokio::spawn(async move {
                bounds.connection(stream, closed).await;
                drop(slot);
            });
        }
        drop(listener);
        let _ = closing.send(true);
        // Every connection holds a slot until it is closed: all slots free, all closed.
        let all = u32::try_from(max_connections).unwrap_or(u32::MAX);
        let drained = tokio::time::timeout(grace, slots.acquire_many(all)).await;
        if drained.is_err() {
            tracing::info!(target: "hooks_server", "shutting down: closing the connections still open after {grace:?}");
        }
        // Dropping the sender ends the connections still open (see `connection`).
        drop(closing);
        if let Some(runtime) = runtime {
            runtime.shutdown().await;
        }
        Ok(())
    }

    async fn connection(&self, stream: TcpStream, mut closed: watch::Receiver<bool>) {
        let _ = stream.set_nodelay(true);
        let activity = Arc::new(Activity::new());
        let io = TokioIo::new(Watched { inner: stream, activity: activity.clone() });
        let router = self.router.clone();
        let requests = activity.clone();
        // Whose connection this is, once a request on it authenticates (per-user limits).
        let claim = ConnectionClaim::default();
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            let mut router = router.clone();
            let answering = Answering::start(&requests);
            request.extensions_mut().insert(claim.clone());
            async move {
                let response = router.call(request.map(axum::body::Body::new)).await;
                drop(answering);
                Ok::<_, Infallible>(response.unwrap_or_else(|never| match never {}))
            }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(self.header_read_timeout);
        let connection = builder.serve_connection(io, service);
        tokio::pin!(connection);
        loop {
            // Once quiet long enough but still answering a request, look again in a while.
            let quiet = activity.quiet_for();
            let wait = if quiet >= self.idle_timeout { self.idle_timeout / 4 } else { self.idle_timeout - quiet };
            tokio::select! {
                _ = connection.as_mut() => return,
                changed = closed.changed() => {
                    if changed.is_err() {
                        // The server stopped waiting for this connection: close it.
                        return;
                    }
                    if *closed.borrow() {
                        // Finish the request being answered, then close (idle: close now).
                        connection.as_mut().graceful_shutdown();
                    }
                }
                () = tokio::time::sleep(wait) => {
                    if activity.answering() == 0 && activity.quiet_for() >= self.idle_timeout {
                        // Dropping the connection closes the socket.
                        return;
                    }
                }
            }
        }
    }
}

/// Errors of one connection that `accept` can return; the listener is fine.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// When a connection last moved a byte, and how many of its requests are being answered. On
/// tokio's clock, as the idle timer that reads it is: a paused-time test controls both.
struct Activity {
    start: tokio::time::Instant,
    last_ms: AtomicU64,
    answering: AtomicUsize,
}

impl Activity {
    fn new() -> Self {
        Activity { start: tokio::time::Instant::now(), last_ms: AtomicU64::new(0), answering: AtomicUsize::new(0) }
    }

    fn moved(&self) {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(now, Ordering::Relaxed);
    }

    fn quiet_for(&self) -> Duration {
        self.start.elapsed().saturating_sub(Duration::from_millis(self.last_ms.load(Ordering::Relaxed)))
    }

    fn answering(&self) -> usize {
        self.answering.load(Ordering::Acquire)
    }
}

/// A request being answered, from its headers until its response starts.
struct Answering(Arc<Activity>);

impl Answering {
    fn start(activity: &Arc<Activity>) -> Self {
        activity.answering.fetch_add(1, Ordering::AcqRel);
        Answering(activity.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.answering.fetch_sub(1, Ordering::AcqRel);
        self.0.moved();
    }
}

/// A socket that notes every read and write that moved bytes.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.moved();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.moved();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.moved();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
