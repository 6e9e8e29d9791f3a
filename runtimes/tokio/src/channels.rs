// channels.rs — the channel variant of the apps that pass values (their parameter
// `via=channel`, workloads/apps/via.hpp): the same workloads, parameters, timed interval,
// start gate and self-checks as apps.rs, with tokio's channels where apps.rs has monitors:
//   BoundedBuffer of capacity C -> tokio::sync::mpsc::channel(C); where several tasks take
//     from one buffer (city's houses, producer's consumers) they share the Receiver under a
//     tokio::sync::Mutex held across recv().await (tokio has no multi-consumer mpsc):
//     SharedChannel, which apps.rs's one program of city and of producer uses;
//   Mailbox (tokenring)         -> mpsc::channel(1) per player;
//   a sieve stage's join        -> a oneshot the stage fires when it is done.
// The sieve and the ring keep programs of their own here: a stage and a player own their
// Receiver (no shared-receiver mutex on their path); their self-checks are apps.rs's.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use crate::apps::{ring_outcome, sieve_outcome, Player};
use crate::micro::capacity;
use crate::sync::{join_all, Gate, Lent, Lock, Padded};
use crate::{Ctx, Outcome};

fn closed() -> ! {
    panic!("a channel closed before the workload ended")
}

/// SharedRx — one mpsc Receiver for several consumers.
struct SharedRx<T>(tokio::sync::Mutex<mpsc::Receiver<T>>);

impl<T> SharedRx<T> {
    async fn recv(&self) -> T {
        self.0.lock().await.recv().await.unwrap_or_else(|| closed())
    }
}

async fn send<T>(tx: &mpsc::Sender<T>, v: T) {
    if tx.send(v).await.is_err() {
        closed()
    }
}

/// SharedChannel — an mpsc channel of capacity C (at least 1) whose consumers share the
/// Receiver (SharedRx): the energy store of city and the buffer of producer for via=channel,
/// with the BoundedBuffer's put and take (apps::city_program, apps::producer_program).
pub struct SharedChannel<T> {
    tx: mpsc::Sender<T>,
    rx: SharedRx<T>,
}

impl<T> SharedChannel<T> {
    pub fn new(cp: usize) -> Self {
        let (tx, rx) = mpsc::channel(cp.max(1));
        SharedChannel { tx, rx: SharedRx(tokio::sync::Mutex::new(rx)) }
    }

    /// put — send `v`, waiting while the channel is full.
    pub async fn put(&self, v: T) {
        send(&self.tx, v).await
    }

    /// take — receive the oldest value, waiting while the channel is empty.
    pub async fn take(&self) -> T {
        self.rx.recv().await
    }
}

type Stage = Pin<Box<dyn Future<Output = ()> + Send>>;

/// stage — as apps::stage, on mpsc channels; it fires `done` when it has finished, after
/// the stage it spawned fired its own.
fn stage(mut input: mpsc::Receiver<i64>, done: oneshot::Sender<()>, primes: Lent<Lock<Vec<i64>>>, cp: usize) -> Stage {
    Box::pin(async move {
        let p = input.recv().await.unwrap_or_else(|| closed());
        if p != 0 {
            primes.with(|v| v.push(p)).await;
            let (out, next_in) = mpsc::channel(cp.max(1));
            let (next_done, next_finished) = oneshot::channel();
            tokio::spawn(stage(next_in, next_done, primes, cp));
            loop {
                let v = input.recv().await.unwrap_or_else(|| closed());
                if v == 0 {
                    break;
                }
                if v % p != 0 {
                    send(&out, v).await;
                }
            }
            send(&out, 0).await;
            if next_finished.await.is_err() {
                panic!("sieve stage after {p} failed");
            }
        }
        let _ = done.send(());
    })
}

/// eratosthenes — as apps::eratosthenes, the stages joined through oneshots.
pub async fn eratosthenes(c: Ctx) -> Result<Outcome, String> {
    let (n, cp) = (c.i64("N")?, c.size("C")?);
    let reference = crate::apps::sequential_primes(n);
    let primes = Lock::new(c.mutex, Vec::with_capacity(reference.len()));
    let gate = Gate::new();
    // SAFETY: the first stage fires its oneshot only after every later stage fired its own
    // (their last use of `primes`); it is awaited below, and both tasks by join_all, before
    // `primes` and `gate` are dropped.
    let (pl, g) = unsafe { (Lent::new(&primes), Lent::new(&gate)) };
    let (first_tx, first_rx) = mpsc::channel::<i64>(cp.max(1));
    let (first_done, first_finished) = oneshot::channel();
    let start = Instant::now();
    let generator = tokio::spawn(async move {
        g.wait().await;
        for v in 2..=n {
            send(&first_tx, v).await;
        }
        send(&first_tx, 0).await;
    });
    let sieve = tokio::spawn(async move {
        g.wait().await;
        stage(first_rx, first_done, pl, cp).await;
    });
    gate.go();
    let joined = join_all(vec![generator, sieve]).await;
    let finished = first_finished.await;
    joined?;
    finished.map_err(|_| "the sieve's first stage failed".to_string())?;
    let secs = start.elapsed().as_secs_f64();
    Ok(sieve_outcome(&c, secs, &primes.into_inner(), &reference))
}

/// tokenring — as apps::tokenring, each player's mailbox an mpsc channel of capacity 1;
/// player 0 hands its receiver back when it is done, so the final token can be read.
pub async fn tokenring(c: Ctx) -> Result<Outcome, String> {
    let (n, k) = (c.size("N")?, c.i64("K")?);
    capacity(n)?;
    let mut txs = Vec::with_capacity(n);
    let mut rxs = Vec::with_capacity(n);
    for _ in 0..n {
        let (tx, rx) = mpsc::channel::<i64>(1);
        txs.push(tx);
        rxs.push(rx);
    }
    let players: Vec<Padded<Player>> = (0..n).map(|_| Padded::default()).collect();
    let gate = Gate::new();
    // SAFETY: every task is awaited below before these are dropped.
    let (tl, pl, g) = unsafe { (Lent::new(&txs), Lent::new(&players), Lent::new(&gate)) };
    let nn = n as i64;
    let start = Instant::now();
    let mut handles = Vec::with_capacity(n);
    for (i, mut rx) in rxs.into_iter().enumerate() {
        handles.push(tokio::spawn(async move {
            g.wait().await;
            let (mut handoffs, mut out_of_order) = (0i64, 0i64);
            let next = &tl[(i + 1) % n];
            for round in 0..k {
                let token = rx.recv().await.unwrap_or_else(|| closed());
                if token != i as i64 + round * nn {
                    out_of_order += 1;
                }
                send(next, token + 1).await;
                handoffs += 1;
            }
            // Relaxed: one writer, read after the join.
            pl[i].0.handoffs.store(handoffs, Ordering::Relaxed);
            pl[i].0.out_of_order.store(out_of_order, Ordering::Relaxed);
            rx
        }));
    }
    gate.go();
    if n > 0 {
        send(&txs[0], 0).await;
    }
    let mut first_rx = None;
    let mut failure = None;
    for (i, h) in handles.into_iter().enumerate() {
        match h.await {
            Ok(rx) if i == 0 => first_rx = Some(rx),
            Ok(_) => {}
            Err(e) => failure = failure.or(Some(format!("a task failed: {e}"))),
        }
    }
    if let Some(f) = failure {
        return Err(f);
    }
    let secs = start.elapsed().as_secs_f64();
    let fin = match first_rx.as_mut() {
        Some(rx) => rx.recv().await.unwrap_or_else(|| closed()),
        None => 0,
    };
    Ok(ring_outcome(&c, secs, fin, &players, k))
}
