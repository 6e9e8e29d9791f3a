// io.rs — the I/O workloads (echo, echo-open; workloads/io/echo.hpp) served as a tokio user
// writes a TCP server: tokio::net::TcpListener, a task per accepted connection (tokio's
// tutorial, "Spawning": `loop { let (socket, _) = listener.accept().await?; tokio::spawn(...) }`,
// https://tokio.rs/tokio/tutorial/spawning), the echo loop AsyncReadExt::read_exact +
// AsyncWriteExt::write_all on a buffer of the message's size. tokio does not set TCP_NODELAY
// (tokio/src/net/tcp/stream.rs, set_nodelay): set here on every connection, as the protocol
// asks. The runtime is the program's (main.rs: new_multi_thread with worker_threads = P, or
// new_current_thread, with enable_io() for these workloads only). The serving protocol: docs/adding-a-backend.md, "Serving an I/O
// workload" — print {"listening": PORT}, serve until stdin ends, exit.
//
// http-hello, http-hello-open (harness/loadgen/protocol.hpp; docs/io-workloads.md): the same
// task per connection on raw TCP, not hyper — every backend runs the same minimal responder,
// so that the runtimes are compared, not HTTP stacks. AsyncReadExt::read into a buffer of
// HTTP_MAX_HEAD bytes, then the complete frames parsed out of it (tokio's tutorial,
// "Framing", https://tokio.rs/tokio/tutorial/framing: read into a buffer, parse every frame it
// holds, read again for the rest), every complete request head answered, in order, by one
// write_all of as many responses.
//
// churn: echo's server, unchanged (a task per connection, one request on each).
//
// rpc, rpc-open: echo's task, the work (rpc_work, protocol.hpp's) done in the task before the
// write_all, as a tokio user does work this short (no spawn_blocking: A. Ryhl, "Async: What
// is blocking?", 2020, the tokio maintainers' rule of thumb: "no more than 10 to 100
// microseconds between each .await"; the workload's sizes sit on that line).
//
// echo-hogs: echo's server, and K tasks beside it (tokio::spawn), each a loop of { one slice
// of rpc_work (hog_slice_rounds: protocol.hpp's); tokio::task::yield_now().await } until stdin
// ends. In tokio 1.24 (Debian's) yield_now defers the task's wake-up until the worker has
// polled its I/O driver (task/yield_now.rs: `context::with_defer`; the multi-thread worker
// wakes the deferred tasks after park_timeout(0), runtime/scheduler/multi_thread/worker.rs),
// so a yielding hog lets the sockets be polled; a task that computes without yielding is not
// stopped by tokio's coop budget (128 units per poll, task/coop.rs: only tokio's own
// resources spend it), which is why the hogs yield themselves. The slices they completed are
// printed when stdin ends.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The bytes of harness/loadgen/protocol.hpp.
const HTTP_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";
const HTTP_MAX_HEAD: usize = 8192;

pub fn is_io(workload: &str) -> bool {
    workload == "echo" || workload == "echo-open" || workload == "churn" || workload == "echo-idle" || workload == "echo-hogs" || is_http(workload) || is_rpc(workload)
}

pub fn is_rpc(workload: &str) -> bool {
    workload == "rpc" || workload == "rpc-open"
}

/// rpc_work — harness/loadgen/protocol.hpp's: `rounds` dependent LCG steps (Knuth's MMIX
/// constants), each followed by an xorshift.
fn rpc_work(seed: u64, rounds: u64) -> u64 {
    let mut x = seed;
    for _ in 0..rounds {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x ^= x >> 29;
    }
    x
}

/// hog_slice_rounds — harness/loadgen/protocol.hpp's: 600 rounds of rpc_work a µs.
pub fn hog_slice_rounds(slice_us: u64) -> u64 {
    slice_us * 600
}

pub fn is_http(workload: &str) -> bool {
    workload == "http-hello" || workload == "http-hello-open"
}

/// http_conn — answer every complete request head with HTTP_RESPONSE until the client closes
/// (or sends a head longer than HTTP_MAX_HEAD).
async fn http_conn(mut s: tokio::net::TcpStream, corrupt: Arc<AtomicBool>) {
    let mut buf = vec![0u8; HTTP_MAX_HEAD];
    let mut out: Vec<u8> = Vec::with_capacity(4 * HTTP_RESPONSE.len());
    let (mut have, mut scan) = (0usize, 0usize);
    while have < buf.len() {
        let n = match s.read(&mut buf[have..]).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        have += n;
        let mut used = 0;
        out.clear();
        while let Some(i) = buf[scan..have].windows(4).position(|w| w == b"\r\n\r\n") {
            used = scan + i + 4;
            scan = used;
            out.extend_from_slice(HTTP_RESPONSE);
        }
        // Resume the search where a terminator split over reads may begin.
        scan = (have.saturating_sub(3)).max(used) - used;
        buf.copy_within(used..have, 0);
        have -= used;
        if out.is_empty() {
            continue;
        }
        if corrupt.swap(false, Ordering::Relaxed) {
            out[0] ^= 0xFF; // --inject-fault: the load generator's byte check must catch it
        }
        if s.write_all(&out).await.is_err() {
            return;
        }
    }
}

static HOG_SINK: AtomicU64 = AtomicU64::new(0);

/// Hogs — echo-hogs' hogs: `count` tasks (none when `start` is false: the test-only
/// COOPBENCH_TEST_LAZY_HOGS) of `rounds` per slice; `count` 0 for every other workload.
pub struct Hogs {
    pub count: usize,
    pub rounds: u64,
    pub start: bool,
}

pub fn serve(rt: &tokio::runtime::Runtime, size: usize, http: bool, rpc: bool, inject_fault: bool, hogs: Hogs) {
    rt.block_on(async move {
        let ln = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
            Ok(l) => l,
            Err(e) => {
                crate::emit(&crate::failed(format!("listen on 127.0.0.1: {e}")));
                return;
            }
        };
        let port = ln.local_addr().map(|a| a.port()).unwrap_or(0);
        // SeqCst is more than the one flag needs (Relaxed would do: only its swap matters).
        let corrupt = Arc::new(AtomicBool::new(inject_fault));
        tokio::spawn(async move {
            while let Ok((mut s, _)) = ln.accept().await {
                let _ = s.set_nodelay(true);
                let corrupt = corrupt.clone();
                if http {
                    tokio::spawn(http_conn(s, corrupt));
                    continue;
                }
                tokio::spawn(async move {
                    let mut buf = vec![0u8; size];
                    loop {
                        if s.read_exact(&mut buf).await.is_err() {
                            return;
                        }
                        if rpc {
                            // The work, then the reply (bytes 0-7: the result).
                            let r = u64::from_le_bytes(buf[0..8].try_into().unwrap());
                            let seed = u64::from_le_bytes(buf[8..16].try_into().unwrap());
                            buf[0..8].copy_from_slice(&rpc_work(seed, r).to_le_bytes());
                        }
                        if corrupt.swap(false, Ordering::Relaxed) {
                            buf[0] ^= 0xFF; // --inject-fault: the load generator's byte check must catch it
                        }
                        if s.write_all(&buf).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        // Relaxed: the flag carries no data (each hog's count comes back through its
        // JoinHandle, which orders it), and the counter is summed once they have ended.
        let stop = Arc::new(AtomicBool::new(false));
        let slices = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        if hogs.start {
            for i in 0..hogs.count {
                let (stop, slices, rounds) = (stop.clone(), slices.clone(), hogs.rounds);
                tasks.push(tokio::spawn(async move {
                    let (mut x, mut n) = (0x9E3779B97F4A7C15u64 + i as u64, 0u64);
                    while !stop.load(Ordering::Relaxed) {
                        x = rpc_work(x, rounds);
                        n += 1;
                        tokio::task::yield_now().await;
                    }
                    slices.fetch_add(n, Ordering::Relaxed);
                    HOG_SINK.fetch_xor(x, Ordering::Relaxed); // the work's result kept: it is not dead code
                }));
            }
        }
        crate::emit(&serde_json::json!({ "listening": port }));
        // The load generator closes stdin when it is done: wait for that off the workers.
        let _ = tokio::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink())).await;
        if hogs.count > 0 {
            stop.store(true, Ordering::Relaxed);
            for t in tasks {
                let _ = t.await;
            }
            crate::emit(&serde_json::json!({ "hogs": hogs.count, "hog_slices": slices.load(Ordering::Relaxed) }));
        }
    });
    std::process::exit(0);
}
