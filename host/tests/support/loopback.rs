//! A server on 127.0.0.1 for tests of `fetch`: it answers every
//! connection with one reply, records each request and counts connections.
//! Shared by the host's tests and the pi adapter's.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A server on 127.0.0.1 answering every connection with `reply` (with
/// `{port}` replaced by its port); it records what each request sent and
/// counts connections.
pub struct Server {
    pub port: u16,
    pub connections: Arc<AtomicUsize>,
    pub requests: Arc<Mutex<Vec<String>>>,
}

pub async fn serve(reply: &'static str) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let (counted, recorded) = (connections.clone(), requests.clone());
    let reply = reply.replace("{port}", &port.to_string());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            counted.fetch_add(1, Ordering::SeqCst);
            let (reply, recorded) = (reply.clone(), recorded.clone());
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                // Read the head and, for a POST, the short body after it.
                while let Ok(n) =
                    tokio::time::timeout(Duration::from_millis(200), socket.read(&mut buf)).await
                {
                    match n {
                        Ok(0) | Err(_) => break,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                    if reply.is_empty() && seen.windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                recorded
                    .lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&seen).into_owned());
                if reply.is_empty() {
                    // Never answer.
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    return;
                }
                let _ = socket.write_all(reply.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    Server {
        port,
        connections,
        requests,
    }
}
