//! Connections: accepted until the server stops, each given a place among the listener's
//! (`--max-connections`: at the cap, the connection that has done nothing for the longest
//! ends to make room), each through TLS (when the server has it), then HTTP/1.1 or HTTP/2
//! (`connection`).

use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::activity::{Activity, Counted};
use super::connection::{self, Connections, Place};
use super::http::Routes;

/// Accepts connections on `listener` until `stop` turns true.
pub(crate) async fn accept(
    listener: TcpListener,
    routes: Arc<Routes>,
    secure: bool,
    connections: Arc<Connections>,
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
        let activity = Activity::new(&routes.shared.budget);
        // At the cap, the connection that has done nothing for the longest makes room.
        let place = tokio::select! {
            place = connections.place(&activity) => place,
            _ = stop.wait_for(|s| *s) => return,
        };
        let _ = stream.set_nodelay(true);
        let routes = Arc::clone(&routes);
        let stop = stop.clone();
        tokio::spawn(async move {
            if secure {
                secure_connection(stream, routes, activity, place, stop).await;
            } else {
                let io = Counted::new(stream, &activity);
                connection::serve(io, routes, activity, false, stop).await;
                drop(place);
            }
        });
    }
}

/// The TLS handshake, which must be over within the header timeout, then HTTP.
async fn secure_connection(
    stream: TcpStream,
    routes: Arc<Routes>,
    activity: Arc<Activity>,
    place: Place,
    stop: watch::Receiver<bool>,
) {
    let Some(config) = routes.shared.tls() else {
        return;
    };
    // Under TLS: what is written to the socket is counted, past rustls' own buffer.
    let io = Counted::new(stream, &activity);
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let handshake = tokio::time::timeout(routes.limits.header_timeout, acceptor.accept(io));
    let handshake = tokio::select! {
        handshake = handshake => handshake,
        // A new connection needs its place.
        () = activity.evicted() => return,
    };
    match handshake {
        Ok(Ok(tls)) => {
            let http2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            connection::serve(tls, routes, activity, http2, stop).await;
        }
        // A failed handshake (a client certificate the CA did not sign, no certificate, a
        // plain HTTP client) or a slow one: the connection is closed; rustls said why to
        // the client.
        Ok(Err(_)) | Err(_) => routes.shared.metrics.handshake_failed(),
    }
    drop(place);
}
