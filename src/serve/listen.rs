//! Connections: accepted until the server stops, each through TLS (when the server has it),
//! then HTTP/1.1 or HTTP/2 as ALPN decides, each under the graceful shutdown's watch.

use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::http::{self, Routes};

/// Accepts connections on `listener` until `stop` turns true.
pub(crate) async fn accept(
    listener: TcpListener,
    routes: Arc<Routes>,
    secure: bool,
    graceful: Arc<GracefulShutdown>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of file descriptors, or the peer gave up before the accept: the next
            // accept may succeed; wait a little so as not to spin.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let routes = Arc::clone(&routes);
        let graceful = graceful.watcher();
        tokio::spawn(async move {
            if secure {
                secure_connection(stream, routes, graceful).await;
            } else {
                connection(TokioIo::new(stream), routes, graceful).await;
            }
        });
    }
}

/// The TLS handshake, which must be over within the header timeout, then HTTP.
async fn secure_connection(stream: TcpStream, routes: Arc<Routes>, graceful: Watcher) {
    let Some(config) = routes.shared.tls() else {
        return;
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let handshake = tokio::time::timeout(routes.limits.header_timeout, acceptor.accept(stream));
    match handshake.await {
        Ok(Ok(tls)) => connection(TokioIo::new(tls), routes, graceful).await,
        // A failed handshake (a client certificate the CA did not sign, no certificate, a
        // plain HTTP client) or a slow one: the connection is closed; rustls said why to
        // the client.
        Ok(Err(_)) | Err(_) => routes.shared.metrics.handshake_failed(),
    }
}

async fn connection<I>(io: TokioIo<I>, routes: Arc<Routes>, graceful: Watcher)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(routes.limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(routes.limits.header_timeout)
        .max_concurrent_streams(256);
    let service = service_fn(move |request| http::route(Arc::clone(&routes), request));
    let connection = builder.serve_connection(io, service).into_owned();
    // A connection that ends in an error (the client went away, a malformed request line)
    // concerns that client only.
    let _ = graceful.watch(connection).await;
}
