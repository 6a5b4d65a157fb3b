//! The host's proxy for a plugin whose network grant is a list of hosts.
//!
//! The kernel filters TCP by port, not by host, so a process with a list of
//! hosts may connect to one port only: this proxy's, on the loopback
//! address, and only over TCP (the seccomp filter refuses every other
//! socket, so it cannot look names up itself either). Its environment
//! names the proxy (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and their
//! lower-case forms). The proxy takes `CONNECT host:port` requests, the way
//! clients reach `https://` through a proxy, resolves and connects to the
//! listed hosts, and answers every other host with `403 Forbidden`, naming
//! the grant. Plain-HTTP requests through it are refused with `405`: after
//! the first request a kept-alive connection could name another host.
//!
//! A runtime that ignores the proxy settings (Node's `fetch` before Node 24,
//! a program that connects by itself) reaches nothing: its own connections
//! are refused by the kernel.
//!
//! One thread accepts; each tunnel has two threads, one a direction, and a
//! proxy holds at most [`MAX_TUNNELS`] tunnels at once. The proxy stops
//! accepting when the last clone of its sandbox is dropped; tunnels open
//! then end when either side closes.

use crate::load::manifest::Network;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The most tunnels one plugin's proxy holds open at once.
pub const MAX_TUNNELS: usize = 64;

/// The longest a request's head may be.
const MAX_HEAD_BYTES: usize = 8 << 10;

/// How long a client has to send its request, and the proxy to connect.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A running proxy for one plugin's processes.
#[derive(Debug)]
pub(super) struct Proxy {
    port: u16,
    stopped: Arc<AtomicBool>,
}

impl Proxy {
    /// Start a proxy on the loopback address that lets `plugin`'s processes
    /// reach the hosts `network` allows.
    pub(super) fn start(plugin: &str, network: Network) -> io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let port = listener.local_addr()?.port();
        let stopped = Arc::new(AtomicBool::new(false));
        let rules = Arc::new(Rules {
            plugin: plugin.to_string(),
            network,
            open: AtomicUsize::new(0),
            dispatch: tracing::dispatcher::get_default(|d| d.clone()),
        });
        let stop = Arc::clone(&stopped);
        std::thread::Builder::new()
            .name("yohost-proxy".into())
            .spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(client) = client else { continue };
                    if rules.open.fetch_add(1, Ordering::SeqCst) >= MAX_TUNNELS {
                        rules.open.fetch_sub(1, Ordering::SeqCst);
                        let _ = refuse(client, "503 Service Unavailable", "too many tunnels open");
                        continue;
                    }
                    let serving = Arc::clone(&rules);
                    let spawned = std::thread::Builder::new()
                        .name("yohost-proxy-tunnel".into())
                        .spawn(move || {
                            let _log = tracing::dispatcher::set_default(&serving.dispatch);
                            serving.serve(client);
                            serving.open.fetch_sub(1, Ordering::SeqCst);
                        });
                    if spawned.is_err() {
                        rules.open.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            })?;
        Ok(Proxy { port, stopped })
    }

    /// The port it listens on, on the loopback address.
    pub(super) fn port(&self) -> u16 {
        self.port
    }

    /// Its URL, as a process's proxy variables give it.
    pub(super) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        // Wake the accepting thread, which then sees it is stopped.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// What one proxy lets through, and how many tunnels it holds.
struct Rules {
    plugin: String,
    network: Network,
    open: AtomicUsize,
    dispatch: tracing::Dispatch,
}

impl Rules {
    /// Serve one client: a `CONNECT` to an allowed host becomes a tunnel;
    /// anything else is answered with a refusal.
    fn serve(&self, mut client: TcpStream) {
        let _ = client.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
        let Some(head) = read_head(&mut client) else {
            let _ = refuse(client, "400 Bad Request", "no request head");
            return;
        };
        let Some((host, port)) = connect_target(&head) else {
            let _ = refuse(
                client,
                "405 Method Not Allowed",
                "only CONNECT (https://) goes through the host's proxy",
            );
            return;
        };
        if !self.network.allows(&host) {
            tracing::warn!(plugin = %self.plugin, "network: {host:?} is not in the plugin's network grant; its connection was refused");
            let why = format!("{host} is not in the plugin's network grant");
            let _ = refuse(client, "403 Forbidden", &why);
            return;
        }
        let upstream = (host.as_str(), port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| {
                addrs.find_map(|addr| TcpStream::connect_timeout(&addr, HANDSHAKE_TIMEOUT).ok())
            });
        let Some(upstream) = upstream else {
            let _ = refuse(
                client,
                "502 Bad Gateway",
                &format!("cannot reach {host}:{port}"),
            );
            return;
        };
        let _ = client.set_read_timeout(None);
        if client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .is_err()
        {
            return;
        }
        tunnel(client, upstream);
    }
}

/// The request's head, up to its blank line (at most [`MAX_HEAD_BYTES`]).
fn read_head(client: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    // Byte by byte: nothing after the head may be taken from the tunnel.
    while !head.ends_with(b"\r\n\r\n") && !head.ends_with(b"\n\n") {
        if head.len() >= MAX_HEAD_BYTES || client.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    String::from_utf8(head).ok()
}

/// The host and port of a `CONNECT host:port HTTP/1.x` request.
fn connect_target(head: &str) -> Option<(String, u16)> {
    let mut words = head.lines().next()?.split_whitespace();
    if words.next()? != "CONNECT" {
        return None;
    }
    let authority = words.next()?;
    let (host, port) = authority.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = port.parse().ok()?;
    (!host.is_empty()).then(|| (host.to_string(), port))
}

/// Answer `client` with `status` and `why`, and close.
fn refuse(mut client: TcpStream, status: &str, why: &str) -> io::Result<()> {
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{why}\n",
        why.len() + 1
    );
    client.write_all(answer.as_bytes())
}

/// Copy both ways between `client` and `upstream` until either side ends.
fn tunnel(client: TcpStream, upstream: TcpStream) {
    let (Ok(client_back), Ok(upstream_back)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let back = std::thread::Builder::new()
        .name("yohost-proxy-tunnel".into())
        .spawn(move || copy_then_close(upstream_back, client_back));
    copy_then_close(client, upstream);
    if let Ok(back) = back {
        let _ = back.join();
    }
}

/// Copy from `from` to `to`, then shut both down.
fn copy_then_close(mut from: TcpStream, mut to: TcpStream) {
    let _ = io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_connect_names_a_target() {
        assert_eq!(
            connect_target("CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
            Some(("api.example.com".into(), 443))
        );
        assert_eq!(
            connect_target("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n"),
            Some(("::1".into(), 8443))
        );
        assert_eq!(connect_target("GET http://x/ HTTP/1.1\r\n\r\n"), None);
        assert_eq!(connect_target("CONNECT nohostport HTTP/1.1\r\n\r\n"), None);
    }

    /// A request through the proxy for `host` with the listener at `port`:
    /// the proxy's status line, and whether the listener was reached.
    fn through(proxy: &Proxy, host: &str, port: u16) -> String {
        let mut client = TcpStream::connect(("127.0.0.1", proxy.port())).unwrap();
        write!(
            client,
            "CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}\r\n\r\n"
        )
        .unwrap();
        let mut answer = [0u8; 256];
        let read = client.read(&mut answer).unwrap();
        String::from_utf8_lossy(&answer[..read])
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    }

    #[test]
    fn a_listed_host_is_tunnelled_and_any_other_is_refused_by_name() {
        let upstream = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = upstream.local_addr().unwrap().port();
        let proxy = Proxy::start("t", Network::Hosts(vec!["localhost".into()])).unwrap();
        // What follows the head goes through the tunnel.
        let mut client = TcpStream::connect(("127.0.0.1", proxy.port())).unwrap();
        write!(client, "CONNECT localhost:{port} HTTP/1.1\r\n\r\nping").unwrap();
        let mut answer = [0u8; 64];
        let read = client.read(&mut answer).unwrap();
        assert!(answer[..read].starts_with(b"HTTP/1.1 200 "));
        let (mut reached, _) = upstream.accept().unwrap();
        let mut got = [0u8; 4];
        reached.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");
        reached.write_all(b"pong").unwrap();
        client.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"pong");
        // The same listener by another name is not in the grant.
        assert_eq!(through(&proxy, "127.0.0.1", port), "HTTP/1.1 403 Forbidden");
        let mut plain = TcpStream::connect(("127.0.0.1", proxy.port())).unwrap();
        write!(plain, "GET http://localhost:{port}/ HTTP/1.1\r\n\r\n").unwrap();
        let mut answer = String::new();
        let _ = plain.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    }
}
