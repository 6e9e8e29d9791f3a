// crosscheck-tokio — create, switch and one hand-off written as tokio's tutorial writes them
// (tokio.rs/tokio/tutorial: "Spawning" with tokio::spawn and JoinHandles, "Channels" with
// mpsc; tokio::task::yield_now), independent of runtimes/tokio, for
// scripts/crosscheck_peers.py. Usage: crosscheck-tokio P [current_thread]; prints
// "create NS", "switch NS", "handoff NS" (medians of 7 runs; the units of coopbench's create
// N=10000, switch T=2 K=20000 and channel T=1 K=20000 C=0, which tokio runs as capacity 1).
// The work is the workload's: each created task sets its own byte (create's self-check), and
// both ends of the hand-off are tasks that the caller awaits (channel's pair).
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

fn median(mut f: impl FnMut() -> f64) -> f64 {
    f(); // warm-up
    let mut xs: Vec<f64> = (0..7).map(|_| f()).collect();
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

async fn create(n: usize) -> f64 {
    // Each task sets its own byte, as the workload's self-check does. Leaked so that the tasks
    // may borrow it for 'static without an Arc count that every task would touch (a few KiB a run).
    let ran: &'static [AtomicU8] = Box::leak((0..n).map(|_| AtomicU8::new(0)).collect());
    let start = Instant::now();
    let handles: Vec<_> = (0..n).map(|i| tokio::spawn(async move { ran[i].store(1, Ordering::Relaxed) })).collect();
    for h in handles {
        h.await.unwrap();
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

async fn switch(t: usize, k: usize) -> f64 {
    let start = Instant::now();
    let handles: Vec<_> = (0..t)
        .map(|_| {
            tokio::spawn(async move {
                for _ in 0..k {
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for h in handles {
        h.await.unwrap();
    }
    start.elapsed().as_nanos() as f64 / (t * k) as f64
}

async fn handoff(k: usize) -> f64 {
    let (ping_tx, mut ping_rx) = tokio::sync::mpsc::channel::<usize>(1);
    let (pong_tx, mut pong_rx) = tokio::sync::mpsc::channel::<usize>(1);
    let start = Instant::now();
    // Both ends are tasks and the caller awaits them, as in the workload's pair.
    let ping = tokio::spawn(async move {
        for j in 0..k {
            ping_tx.send(j).await.unwrap();
            pong_rx.recv().await.unwrap();
        }
    });
    let pong = tokio::spawn(async move {
        for _ in 0..k {
            let v = ping_rx.recv().await.unwrap();
            pong_tx.send(v + 1).await.unwrap();
        }
    });
    ping.await.unwrap();
    pong.await.unwrap();
    start.elapsed().as_nanos() as f64 / (2 * k) as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let p: usize = match args.first().and_then(|a| a.parse().ok()) {
        Some(p) if p >= 1 => p,
        _ => {
            eprintln!("usage: crosscheck-tokio P [current_thread]");
            std::process::exit(2);
        }
    };
    let rt = if args.get(1).map(String::as_str) == Some("current_thread") {
        tokio::runtime::Builder::new_current_thread().build().unwrap()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(p).build().unwrap()
    };
    // As a tokio program's work runs: inside a task on the runtime (#[tokio::main] spawns none,
    // but the harness's tokio backend runs the workload as a task; so does this).
    let run = |w: &'static str| -> f64 {
        median(|| {
            rt.block_on(async move {
                tokio::spawn(async move {
                    match w {
                        "create" => create(10_000).await,
                        "switch" => switch(2, 20_000).await,
                        _ => handoff(20_000).await,
                    }
                })
                .await
                .unwrap()
            })
        })
    };
    println!("create {:.2}", run("create"));
    println!("switch {:.2}", run("switch"));
    println!("handoff {:.2}", run("handoff"));
}
