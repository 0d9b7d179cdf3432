//! Raw TLS sockets to kapi, for tests that must send bytes no HTTP client
//! would: slow or partial headers, lying Content-Length, plain HTTP on the
//! TLS port, and hand-built HTTP/2 frames. The client trusts kapi's CA
//! (`pki/ca.crt`) and, unless asked otherwise, presents the admin client
//! certificate (`pki/admin.crt` + `pki/admin.key`, system:masters), the same
//! identity `Kapi::admin_client` uses.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, ReadHalf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use super::Kapi;

/// `127.0.0.1:PORT` of kapi's secure port.
pub fn socket_addr(k: &Kapi) -> SocketAddr {
    let rest = k
        .url
        .strip_prefix("https://")
        .expect("kapi url is https://");
    let hostport = rest.split('/').next().expect("host:port");
    hostport.parse().expect("kapi url host:port")
}

/// A rustls client configuration trusting kapi's CA, offering `alpn`, and
/// presenting the admin client certificate when `admin` is set.
pub fn client_config(k: &Kapi, alpn: &[&[u8]], admin: bool) -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(k.pki("ca.crt").as_bytes()) {
        roots.add(cert.expect("ca.crt PEM")).expect("add kapi CA");
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots);
    let mut config = if admin {
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(k.pki("admin.crt").as_bytes())
                .collect::<Result<_, _>>()
                .expect("admin.crt PEM");
        let key = PrivateKeyDer::from_pem_slice(k.pki("admin.key").as_bytes()).expect("admin.key");
        builder
            .with_client_auth_cert(chain, key)
            .expect("admin client certificate")
    } else {
        builder.with_no_client_auth()
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// A TLS connection to kapi as the admin, offering `alpn`.
pub async fn connect(k: &Kapi, alpn: &[&[u8]]) -> io::Result<TlsStream<TcpStream>> {
    connect_with(k, client_config(k, alpn, true)).await
}

pub async fn connect_with(
    k: &Kapi,
    config: Arc<rustls::ClientConfig>,
) -> io::Result<TlsStream<TcpStream>> {
    let tcp = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(socket_addr(k)))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "TCP connect timed out"))??;
    let _ = tcp.set_nodelay(true);
    let name = ServerName::IpAddress(socket_addr(k).ip().into());
    tokio::time::timeout(
        Duration::from_secs(10),
        TlsConnector::from(config).connect(name, tcp),
    )
    .await
    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "TLS handshake timed out"))?
}

/// One HTTP/1.x response read off a raw socket.
#[derive(Debug, Clone)]
pub struct RawResponse {
    pub status: u16,
    /// The status line and headers, as text.
    pub head: String,
    pub body: Vec<u8>,
    pub elapsed: Duration,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// What came back on a raw HTTP/1.x connection.
#[derive(Debug, Clone)]
pub enum Outcome {
    Response(RawResponse),
    /// The server closed (or reset) the connection before a whole response
    /// head arrived; `bytes` is whatever did arrive.
    Closed {
        elapsed: Duration,
        bytes: Vec<u8>,
    },
    /// Nothing conclusive within the limit.
    TimedOut {
        bytes: Vec<u8>,
    },
}

impl Outcome {
    pub fn status(&self) -> Option<u16> {
        match self {
            Outcome::Response(r) => Some(r.status),
            _ => None,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Outcome::Response(r) => format!(
                "{} after {:?}: {}",
                r.status,
                r.elapsed,
                snippet(&r.body_text(), 160)
            ),
            Outcome::Closed { elapsed, bytes } => format!(
                "connection closed after {elapsed:?} without a response ({} bytes: {})",
                bytes.len(),
                snippet(&String::from_utf8_lossy(bytes), 120)
            ),
            Outcome::TimedOut { bytes } => format!(
                "no answer within the limit ({} bytes: {})",
                bytes.len(),
                snippet(&String::from_utf8_lossy(bytes), 120)
            ),
        }
    }
}

pub fn snippet(s: &str, n: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() > n {
        format!("{}…", one_line.chars().take(n).collect::<String>())
    } else {
        one_line
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Reads one HTTP/1.x response (head plus a Content-Length, chunked or
/// read-to-close body) within `limit`.
pub async fn read_response<R: AsyncRead + Unpin>(r: &mut R, limit: Duration) -> Outcome {
    let start = Instant::now();
    let deadline = start + limit;
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut eof = false;
    // Head.
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i + 4;
        }
        if eof {
            return Outcome::Closed {
                elapsed: start.elapsed(),
                bytes: buf,
            };
        }
        match tokio::time::timeout_at(deadline.into(), r.read(&mut chunk)).await {
            Err(_) => return Outcome::TimedOut { bytes: buf },
            Ok(Ok(0)) | Ok(Err(_)) => eof = true,
            Ok(Ok(n)) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .unwrap_or(0);
    let mut resp = RawResponse {
        status,
        head,
        body: Vec::new(),
        elapsed: start.elapsed(),
    };
    let mut body = buf[head_end..].to_vec();
    let content_length = resp
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok());
    let chunked = resp
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let no_body = (100..200).contains(&status) || status == 204 || status == 304;
    loop {
        let done = if no_body {
            true
        } else if let Some(n) = content_length {
            body.len() >= n
        } else if chunked {
            body.starts_with(b"0\r\n") || find(&body, b"\r\n0\r\n").is_some()
        } else {
            false
        };
        if done || eof {
            break;
        }
        match tokio::time::timeout_at(deadline.into(), r.read(&mut chunk)).await {
            Err(_) => break,
            Ok(Ok(0)) | Ok(Err(_)) => eof = true,
            Ok(Ok(n)) => body.extend_from_slice(&chunk[..n]),
        }
    }
    if let Some(n) = content_length {
        body.truncate(n);
    }
    resp.body = body;
    Outcome::Response(resp)
}

/// Connects as the admin over HTTP/1.1, writes `request` (concurrently with
/// reading, so a server that answers before it has read everything is seen)
/// and reads the first response within `limit`.
pub async fn exchange(k: &Kapi, request: Vec<u8>, limit: Duration) -> io::Result<Outcome> {
    let tls = connect(k, &[b"http/1.1"]).await?;
    let (mut rd, mut wr) = tokio::io::split(tls);
    let writer = tokio::spawn(async move {
        let _ = wr.write_all(&request).await;
        let _ = wr.flush().await;
        // Keep the write half open until the reader is done.
        tokio::time::sleep(Duration::from_secs(3600)).await;
        drop(wr);
    });
    let out = read_response(&mut rd, limit).await;
    writer.abort();
    Ok(out)
}

// ---------------------------------------------------------------------------
// HTTP/2 frames by hand
// ---------------------------------------------------------------------------

pub mod h2 {
    use super::*;

    pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    pub const DATA: u8 = 0x0;
    pub const HEADERS: u8 = 0x1;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const CONTINUATION: u8 = 0x9;

    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;

    pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;

    /// RFC 9113 error codes.
    pub fn error_name(code: u32) -> &'static str {
        match code {
            0x0 => "NO_ERROR",
            0x1 => "PROTOCOL_ERROR",
            0x2 => "INTERNAL_ERROR",
            0x3 => "FLOW_CONTROL_ERROR",
            0x4 => "SETTINGS_TIMEOUT",
            0x5 => "STREAM_CLOSED",
            0x6 => "FRAME_SIZE_ERROR",
            0x7 => "REFUSED_STREAM",
            0x8 => "CANCEL",
            0x9 => "COMPRESSION_ERROR",
            0xa => "CONNECT_ERROR",
            0xb => "ENHANCE_YOUR_CALM",
            0xc => "INADEQUATE_SECURITY",
            0xd => "HTTP_1_1_REQUIRED",
            _ => "UNKNOWN",
        }
    }

    /// One frame: 24-bit length, type, flags, 31-bit stream id, payload.
    pub fn frame(ty: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        frame_with_length(ty, flags, stream, payload.len() as u32, payload)
    }

    /// A frame whose header claims `length` whatever the payload is.
    pub fn frame_with_length(
        ty: u8,
        flags: u8,
        stream: u32,
        length: u32,
        payload: &[u8],
    ) -> Vec<u8> {
        let mut f = Vec::with_capacity(9 + payload.len());
        f.extend_from_slice(&length.to_be_bytes()[1..]);
        f.push(ty);
        f.push(flags);
        f.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    pub fn settings(entries: &[(u16, u32)]) -> Vec<u8> {
        let mut p = Vec::with_capacity(entries.len() * 6);
        for (id, v) in entries {
            p.extend_from_slice(&id.to_be_bytes());
            p.extend_from_slice(&v.to_be_bytes());
        }
        frame(SETTINGS, 0, 0, &p)
    }

    fn hpack_string(out: &mut Vec<u8>, s: &[u8]) {
        // 7-bit prefix integer, no Huffman.
        let mut n = s.len();
        if n < 127 {
            out.push(n as u8);
        } else {
            out.push(127);
            n -= 127;
            while n >= 128 {
                out.push((n % 128) as u8 | 0x80);
                n /= 128;
            }
            out.push(n as u8);
        }
        out.extend_from_slice(s);
    }

    /// An HPACK block for `GET path` using only the static table and
    /// literals without indexing, so no dynamic-table state is needed.
    pub fn get_block(path: &str, authority: &str) -> Vec<u8> {
        let mut b = vec![0x82, 0x87]; // :method GET, :scheme https
        b.push(0x04); // :path, literal without indexing, name index 4
        hpack_string(&mut b, path.as_bytes());
        b.push(0x01); // :authority, name index 1
        hpack_string(&mut b, authority.as_bytes());
        b
    }

    /// A HEADERS frame (END_HEADERS | END_STREAM) for `GET path`.
    pub fn get(stream: u32, path: &str, authority: &str) -> Vec<u8> {
        frame(
            HEADERS,
            END_HEADERS | END_STREAM,
            stream,
            &get_block(path, authority),
        )
    }

    /// `GET path` as a HEADERS frame plus CONTINUATION frames of at most
    /// `max` bytes each (for header blocks over the peer's frame size).
    pub fn get_split(stream: u32, path: &str, authority: &str, max: usize) -> Vec<u8> {
        let block = get_block(path, authority);
        let chunks: Vec<&[u8]> = block.chunks(max).collect();
        let mut out = Vec::new();
        for (i, c) in chunks.iter().enumerate() {
            let last = i + 1 == chunks.len();
            let flags = if last { END_HEADERS } else { 0 };
            if i == 0 {
                out.extend(frame(HEADERS, flags | END_STREAM, stream, c));
            } else {
                out.extend(frame(CONTINUATION, flags, stream, c));
            }
        }
        out
    }

    pub fn rst(stream: u32, code: u32) -> Vec<u8> {
        frame(RST_STREAM, 0, stream, &code.to_be_bytes())
    }

    #[derive(Debug, Clone)]
    pub struct Frame {
        pub ty: u8,
        pub flags: u8,
        pub stream: u32,
        pub payload: Vec<u8>,
    }

    #[derive(Debug)]
    pub enum Event {
        Frame(Frame),
        Closed,
        TimedOut,
    }

    /// What a connection said over a while.
    #[derive(Debug, Default, Clone)]
    pub struct Summary {
        /// The GOAWAY error code, if one came.
        pub goaway: Option<u32>,
        pub closed: bool,
        /// Streams that got a HEADERS frame (a response).
        pub answered: std::collections::BTreeSet<u32>,
        /// Streams reset by the server, with the code.
        pub reset: Vec<(u32, u32)>,
        pub settings_acks: usize,
        pub pings_acked: usize,
        pub frames: usize,
        /// The server's SETTINGS_MAX_CONCURRENT_STREAMS, if it sent one.
        pub max_concurrent_streams: Option<u32>,
        /// `:status` of the first response, when it was the static-table 200.
        pub first_status_200: Option<bool>,
    }

    impl Summary {
        pub fn describe(&self) -> String {
            format!(
                "goaway={} closed={} answered={} reset={} (codes {:?}) settings_acks={} frames={}",
                self.goaway
                    .map(|c| format!("{}({c})", error_name(c)))
                    .unwrap_or_else(|| "none".into()),
                self.closed,
                self.answered.len(),
                self.reset.len(),
                self.reset
                    .iter()
                    .map(|(_, c)| error_name(*c))
                    .collect::<std::collections::BTreeSet<_>>(),
                self.settings_acks,
                self.frames,
            )
        }
    }

    /// A raw HTTP/2 connection: a writer task fed through a channel (so a
    /// flood never deadlocks against unread server frames) and a reader.
    pub struct Conn {
        tx: mpsc::UnboundedSender<Vec<u8>>,
        rd: ReadHalf<TlsStream<TcpStream>>,
        buf: Vec<u8>,
        writer: tokio::task::JoinHandle<()>,
        pub authority: String,
        pub summary: Summary,
    }

    impl Drop for Conn {
        fn drop(&mut self) {
            self.writer.abort();
        }
    }

    impl Conn {
        /// Connects with ALPN `h2` as the admin and sends the client
        /// preface with an empty SETTINGS frame.
        pub async fn open(k: &Kapi) -> io::Result<Conn> {
            let tls = connect(k, &[b"h2"]).await?;
            if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
                return Err(io::Error::other("server did not negotiate h2"));
            }
            let (rd, mut wr) = tokio::io::split(tls);
            let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
            let writer = tokio::spawn(async move {
                while let Some(bytes) = rx.recv().await {
                    if wr.write_all(&bytes).await.is_err() {
                        break;
                    }
                    if wr.flush().await.is_err() {
                        break;
                    }
                }
                // Keep the write half open while the reader still reads.
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(wr);
            });
            let conn = Conn {
                tx,
                rd,
                buf: Vec::new(),
                writer,
                authority: socket_addr(k).to_string(),
                summary: Summary::default(),
            };
            let mut hello = PREFACE.to_vec();
            hello.extend(settings(&[]));
            conn.send(hello);
            Ok(conn)
        }

        pub fn send(&self, bytes: Vec<u8>) {
            let _ = self.tx.send(bytes);
        }

        /// The next frame, answering the server's SETTINGS as it goes.
        pub async fn next(&mut self, deadline: Instant) -> Event {
            let mut chunk = vec![0u8; 64 * 1024];
            loop {
                if self.buf.len() >= 9 {
                    let len =
                        u32::from_be_bytes([0, self.buf[0], self.buf[1], self.buf[2]]) as usize;
                    if self.buf.len() >= 9 + len {
                        let f = Frame {
                            ty: self.buf[3],
                            flags: self.buf[4],
                            stream: u32::from_be_bytes([
                                self.buf[5],
                                self.buf[6],
                                self.buf[7],
                                self.buf[8],
                            ]) & 0x7fff_ffff,
                            payload: self.buf[9..9 + len].to_vec(),
                        };
                        self.buf.drain(..9 + len);
                        self.note(&f);
                        return Event::Frame(f);
                    }
                }
                match tokio::time::timeout_at(deadline.into(), self.rd.read(&mut chunk)).await {
                    Err(_) => return Event::TimedOut,
                    Ok(Ok(0)) | Ok(Err(_)) => {
                        self.summary.closed = true;
                        return Event::Closed;
                    }
                    Ok(Ok(n)) => self.buf.extend_from_slice(&chunk[..n]),
                }
            }
        }

        fn note(&mut self, f: &Frame) {
            let s = &mut self.summary;
            s.frames += 1;
            match f.ty {
                SETTINGS if f.flags & ACK != 0 => s.settings_acks += 1,
                SETTINGS => {
                    for e in f.payload.chunks_exact(6) {
                        let id = u16::from_be_bytes([e[0], e[1]]);
                        let v = u32::from_be_bytes([e[2], e[3], e[4], e[5]]);
                        if id == SETTINGS_MAX_CONCURRENT_STREAMS {
                            s.max_concurrent_streams = Some(v);
                        }
                    }
                    let _ = self.tx.send(frame(SETTINGS, ACK, 0, &[]));
                }
                PING if f.flags & ACK != 0 => s.pings_acked += 1,
                GOAWAY if f.payload.len() >= 8 => {
                    s.goaway = Some(u32::from_be_bytes([
                        f.payload[4],
                        f.payload[5],
                        f.payload[6],
                        f.payload[7],
                    ]))
                }
                RST_STREAM if f.payload.len() >= 4 => s.reset.push((
                    f.stream,
                    u32::from_be_bytes([f.payload[0], f.payload[1], f.payload[2], f.payload[3]]),
                )),
                HEADERS => {
                    if s.answered.is_empty() {
                        // Go and the h2 crate both send `:status: 200` as
                        // the static-table entry 8.
                        let block = if f.flags & 0x8 != 0 {
                            // PADDED: skip the pad length byte.
                            f.payload.get(1..).unwrap_or(&[])
                        } else {
                            &f.payload[..]
                        };
                        s.first_status_200 = block.first().map(|b| *b == 0x88);
                    }
                    s.answered.insert(f.stream);
                }
                _ => {}
            }
        }

        /// Reads frames until the connection closes, `for` elapses, or
        /// (when `stop_on_goaway`) a GOAWAY arrives; returns the summary.
        pub async fn collect(&mut self, r#for: Duration, stop_on_goaway: bool) -> Summary {
            let deadline = Instant::now() + r#for;
            loop {
                match self.next(deadline).await {
                    Event::Frame(f) if f.ty == GOAWAY && stop_on_goaway => break,
                    Event::Frame(_) => {}
                    Event::Closed | Event::TimedOut => break,
                }
            }
            self.summary.clone()
        }

        /// Reads until the stream `id` is answered or reset, the connection
        /// closes, or `for` elapses.
        pub async fn wait_stream(&mut self, id: u32, r#for: Duration) -> Summary {
            let deadline = Instant::now() + r#for;
            loop {
                if self.summary.answered.contains(&id)
                    || self.summary.reset.iter().any(|(s, _)| *s == id)
                {
                    break;
                }
                match self.next(deadline).await {
                    Event::Frame(_) => {}
                    Event::Closed | Event::TimedOut => break,
                }
            }
            self.summary.clone()
        }
    }
}
