//! HTTP/2 writes gathered per connection before TLS sees them.
//!
//! A watch event reaching many watchers wakes one stream task per watcher.
//! Each stream hands its DATA frame to the connection, and the connection
//! task (woken next, from the runtime's LIFO slot) flushes it at once: one
//! TLS record, one encryption pass and one `write` per watcher. With 1,000
//! watchers on 32 connections that was 1,000 records per change, and most
//! of a fan-out's time.
//!
//! [`Coalesce`] keeps what HTTP/2 writes until it flushes. A flush that
//! carries only a little, and only DATA frames (a body streaming on, not
//! the start of a response), first yields once: the other streams of the
//! connection woken by the same event add their frames, and all go out
//! together. Any other flush (response headers, settings, pings, resets)
//! goes out at once, so a request's answer never waits for the yield; big
//! writes (a list's body) pass straight through, uncopied.

use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

/// HTTP/2's frame header: 24-bit length, type, flags, stream id.
const FRAME_HEADER: usize = 9;
const DATA: u8 = 0;
/// A write this big goes through as it is, and so does what is held once it
/// reaches this much: a full TLS record's worth needs no company, and a big
/// body (a list) is not copied.
const ENOUGH: usize = 16 * 1024;

/// The frames held and what they are.
#[derive(Debug, Default)]
struct Held {
    bytes: Vec<u8>,
    /// Where the next frame's header starts, from `bytes[0]`.
    next_frame: usize,
    /// Whether every frame started so far is a DATA frame.
    only_data: bool,
}

impl Held {
    fn add(&mut self, data: &[u8]) {
        if self.bytes.is_empty() {
            self.only_data = true;
        }
        self.bytes.extend_from_slice(data);
        while self.only_data && self.next_frame + FRAME_HEADER <= self.bytes.len() {
            let h = &self.bytes[self.next_frame..self.next_frame + FRAME_HEADER];
            let len = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
            self.only_data = h[3] == DATA;
            self.next_frame += FRAME_HEADER + len;
        }
    }

    fn sent(&mut self, n: usize) {
        self.bytes.drain(..n);
        // Once partly sent, the boundaries no longer matter: everything
        // held goes out before anything is held again.
        self.next_frame = self.next_frame.saturating_sub(n);
    }
}

/// An HTTP/2 connection's transport, holding writes until a flush (see the
/// module's documentation).
#[derive(Debug)]
pub struct Coalesce<T> {
    inner: T,
    held: Held,
    /// A flush of DATA frames has yielded once and goes out when polled again.
    yielded: bool,
}

impl<T> Coalesce<T> {
    pub fn new(inner: T) -> Self {
        Coalesce {
            inner,
            held: Held::default(),
            yielded: false,
        }
    }
}

impl<T: AsyncWrite + Unpin> Coalesce<T> {
    /// Writes out everything held.
    fn poll_send_held(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while !self.held.bytes.is_empty() {
            let n = std::task::ready!(Pin::new(&mut self.inner).poll_write(cx, &self.held.bytes))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.held.sent(n);
        }
        self.held.next_frame = 0;
        Poll::Ready(Ok(()))
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Coalesce<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Coalesce<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if total >= ENOUGH || self.held.bytes.len() >= ENOUGH {
            std::task::ready!(self.poll_send_held(cx))?;
        }
        if total >= ENOUGH {
            return Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        }
        let mut n = 0;
        for b in bufs {
            self.held.add(b);
            n += b.len();
        }
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let small = !self.held.bytes.is_empty() && self.held.bytes.len() < ENOUGH;
        if self.held.only_data && small && !self.yielded {
            self.yielded = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        std::task::ready!(self.poll_send_held(cx))?;
        self.yielded = false;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.poll_send_held(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![
            (len >> 16) as u8,
            (len >> 8) as u8,
            len as u8,
            kind,
            0,
            0,
            0,
            0,
            1,
        ];
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn frames_are_told_apart_across_writes() {
        let mut held = Held::default();
        let data = frame(DATA, b"hello");
        held.add(&data[..4]);
        assert!(held.only_data, "a DATA header cut in two");
        held.add(&data[4..]);
        held.add(&frame(DATA, b""));
        assert!(held.only_data);
        held.add(&frame(1, b"headers"));
        assert!(!held.only_data, "a HEADERS frame goes out at once");
        held.sent(held.bytes.len());
        held.add(&frame(DATA, b"x"));
        assert!(held.only_data, "what is held next is judged anew");
    }

    /// Everything written arrives, in order; a DATA-only flush yields once
    /// and then goes out, anything else goes out at once.
    #[tokio::test]
    async fn held_writes_go_out_on_flush_in_order() {
        let (a, mut b) = tokio::io::duplex(1 << 20);
        let mut w = Coalesce::new(a);
        let headers = frame(1, b"response headers");
        let body = frame(DATA, &[7u8; 4_000]);
        let big = frame(DATA, &[8u8; 40_000]);
        w.write_all(&headers).await.expect("write");
        let mut flush = std::pin::pin!(std::future::poll_fn(|cx| Pin::new(&mut w).poll_flush(cx)));
        assert!(
            futures::poll!(flush.as_mut()).is_ready(),
            "headers are flushed at once"
        );
        w.write_all(&body).await.expect("write");
        let mut flush = std::pin::pin!(std::future::poll_fn(|cx| Pin::new(&mut w).poll_flush(cx)));
        assert!(
            futures::poll!(flush.as_mut()).is_pending(),
            "DATA waits one turn"
        );
        assert!(futures::poll!(flush.as_mut()).is_ready(), "and then goes");
        w.write_all(&body).await.expect("write");
        w.write_all(&big).await.expect("write");
        w.write_all(&body).await.expect("write");
        let mut flush = std::pin::pin!(std::future::poll_fn(|cx| Pin::new(&mut w).poll_flush(cx)));
        assert!(
            futures::poll!(flush.as_mut()).is_pending(),
            "small DATA after a big write waits one turn too"
        );
        w.write_all(&body).await.expect("write");
        w.shutdown().await.expect("shutdown");
        let mut got = Vec::new();
        b.read_to_end(&mut got).await.expect("read");
        let mut want = headers.clone();
        for part in [&body, &body, &big, &body, &body] {
            want.extend_from_slice(part);
        }
        assert_eq!(got, want);
    }
}
