// io.rs — the I/O workloads (echo, echo-open; workloads/io/echo.hpp) served as a tokio user
// writes a TCP server: tokio::net::TcpListener, a task per accepted connection (tokio's
// tutorial, "Spawning": `loop { let (socket, _) = listener.accept().await?; tokio::spawn(...) }`,
// https://tokio.rs/tokio/tutorial/spawning), the echo loop AsyncReadExt::read_exact +
// AsyncWriteExt::write_all on a buffer of the message's size. tokio does not set TCP_NODELAY
// (tokio/src/net/tcp/stream.rs, set_nodelay): set here on every connection, as the protocol
// asks. The runtime is the program's (main.rs: new_multi_thread with worker_threads = P, or
// new_current_thread, with enable_io() for these workloads only). The serving protocol: docs/adding-a-backend.md, "Serving an I/O
// workload" — print {"listening": PORT}, serve until stdin ends, exit.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub fn is_io(workload: &str) -> bool {
    workload == "echo" || workload == "echo-open"
}

pub fn serve(rt: &tokio::runtime::Runtime, size: usize, inject_fault: bool) {
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
                tokio::spawn(async move {
                    let mut buf = vec![0u8; size];
                    loop {
                        if s.read_exact(&mut buf).await.is_err() {
                            return;
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
        crate::emit(&serde_json::json!({ "listening": port }));
        // The load generator closes stdin when it is done: wait for that off the workers.
        let _ = tokio::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink())).await;
    });
    std::process::exit(0);
}
