// channels.rs — the channel variant of the apps that pass values (their parameter
// `via=channel`, workloads/apps/via.hpp): the same workloads, parameters, timed interval,
// start gate and self-checks as apps.rs, with tokio's channels where apps.rs has monitors:
//   BoundedBuffer of capacity C -> tokio::sync::mpsc::channel(C); where several tasks take
//     from one buffer (city's houses, producer's consumers) they share the Receiver under a
//     tokio::sync::Mutex held across recv().await (tokio has no multi-consumer mpsc);
//   Mailbox (tokenring)         -> mpsc::channel(1) per player;
//   a sieve stage's join        -> a oneshot the stage fires when it is done.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use crate::micro::capacity;
use crate::sync::{join_all, spawn_gated, Gate, Lent, Lock, Padded};
use crate::{expect, first_failure, Ctx, Outcome};

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

/// city — as apps::city, the energy store an mpsc channel of capacity C.
pub async fn city(c: Ctx) -> Result<Outcome, String> {
    let (n, k, cp) = (c.size("N")?, c.i64("K")?, c.size("C")?);
    capacity(n + 1)?;
    let units = n as i64 * k;
    let river = Lock::new(c.mutex, 0i64);
    let (tx, rx) = mpsc::channel::<u8>(cp.max(1));
    let rx = SharedRx(tokio::sync::Mutex::new(rx));
    let produced = AtomicI64::new(0);
    let consumed: Vec<Padded<AtomicI64>> = (0..n).map(|_| Padded(AtomicI64::new(0))).collect();
    let gate = Gate::new();
    // SAFETY: every task is awaited by join_all below before these are dropped.
    let (rv, stx, srx, pr, co, g) = unsafe {
        (Lent::new(&river), Lent::new(&tx), Lent::new(&rx), Lent::new(&produced), Lent::new(&consumed), Lent::new(&gate))
    };
    let start = Instant::now();
    let handles = spawn_gated(g, n + 1, move |i| async move {
        // Relaxed counters: each has one writer and is read after join_all.
        if i == 0 {
            for _ in 0..units {
                rv.with(|d| *d += 1).await;
                send(&stx, 1).await;
                pr.store(pr.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
            return;
        }
        let mine = &co[i - 1].0;
        for _ in 0..k {
            let e = srx.recv().await as i64;
            mine.store(mine.load(Ordering::Relaxed) + e, Ordering::Relaxed);
            rv.with(|d| *d += 1).await;
        }
    });
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    let mut used: i64 = consumed.iter().map(|x| x.0.load(Ordering::Relaxed)).sum();
    if c.inject_fault {
        used -= 1;
    }
    let drawn = river.into_inner();
    let check = first_failure(&[
        expect("energy produced", produced.load(Ordering::Relaxed), units),
        expect("energy consumed", used, units),
        expect("water drawn", drawn, 2 * units),
    ]);
    let mut o = Outcome { seconds: secs, value: secs * 1e3, check, ..Default::default() };
    o.counters.insert("threads".into(), (n + 1) as f64);
    Ok(o)
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
    let found = primes.into_inner();
    let sum: i64 = found.iter().sum();
    let want_sum: i64 = reference.iter().sum();
    let mut count = found.len() as i64;
    if c.inject_fault {
        count += 1;
    }
    let check = first_failure(&[
        expect("primes found", count, reference.len() as i64),
        expect("sum of primes", sum, want_sum),
    ]);
    let mut o = Outcome { seconds: secs, value: secs * 1e3, check, ..Default::default() };
    o.counters.insert("primes".into(), count as f64);
    o.counters.insert("threads".into(), (count + 2) as f64);
    Ok(o)
}

/// producer — as apps::producer, through one mpsc channel of capacity C.
pub async fn producer(c: Ctx) -> Result<Outcome, String> {
    let (n, cp, k) = (c.size("N")?, c.size("C")?, c.i64("K")?);
    capacity(2 * n)?;
    let (tx, rx) = mpsc::channel::<i64>(cp.max(1));
    let rx = SharedRx(tokio::sync::Mutex::new(rx));
    #[derive(Default)]
    struct Tally {
        count: AtomicI64,
        sum: AtomicI64,
        hash: AtomicU64,
    }
    let tallies: Vec<Padded<Tally>> = (0..n).map(|_| Padded::default()).collect();
    let gate = Gate::new();
    // SAFETY: every task is awaited by join_all below before these are dropped.
    let (stx, srx, ts, g) = unsafe { (Lent::new(&tx), Lent::new(&rx), Lent::new(&tallies), Lent::new(&gate)) };
    let start = Instant::now();
    let handles = spawn_gated(g, 2 * n, move |t| async move {
        if t < n {
            let base = t as i64 * k;
            for j in 1..=k {
                send(&stx, base + j).await;
            }
            return;
        }
        let (mut count, mut sum, mut hash) = (0i64, 0i64, 0u64);
        for _ in 0..k {
            let v = srx.recv().await;
            count += 1;
            sum += v;
            hash = hash.wrapping_add(crate::apps::digest(v));
        }
        // Relaxed: one writer, read after join_all.
        let me = &ts[t - n].0;
        me.count.store(count, Ordering::Relaxed);
        me.sum.store(sum, Ordering::Relaxed);
        me.hash.store(hash, Ordering::Relaxed);
    });
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    let messages = n as i64 * k;
    let (mut count, mut sum, mut hash) = (0i64, 0i64, 0u64);
    for t in &tallies {
        count += t.0.count.load(Ordering::Relaxed);
        sum += t.0.sum.load(Ordering::Relaxed);
        hash = hash.wrapping_add(t.0.hash.load(Ordering::Relaxed));
    }
    let want_hash = (1..=messages).fold(0u64, |h, v| h.wrapping_add(crate::apps::digest(v)));
    if c.inject_fault {
        sum += 1;
    }
    let check = first_failure(&[
        expect("messages consumed", count, messages),
        expect("sum consumed", sum, messages * (messages + 1) / 2),
        expect("hash of consumed", hash, want_hash),
    ]);
    let mut o = Outcome { seconds: secs, value: secs * 1e3, check, ..Default::default() };
    o.counters.insert("threads".into(), (2 * n) as f64);
    Ok(o)
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
    #[derive(Default)]
    struct Player {
        handoffs: AtomicI64,
        out_of_order: AtomicI64,
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
    let mut fin = match first_rx.as_mut() {
        Some(rx) => rx.recv().await.unwrap_or_else(|| closed()),
        None => 0,
    };
    let (mut handoffs, mut out_of_order) = (0i64, 0i64);
    for p in &players {
        handoffs += p.0.handoffs.load(Ordering::Relaxed);
        out_of_order += p.0.out_of_order.load(Ordering::Relaxed);
    }
    if c.inject_fault {
        fin += 1;
    }
    let check = first_failure(&[
        expect("final token", fin, nn * k),
        expect("hand-offs", handoffs, nn * k),
        expect("hand-offs out of ring order", out_of_order, 0),
    ]);
    let mut o = Outcome { seconds: secs, value: secs * 1e3, check, ..Default::default() };
    o.counters.insert("handoffs".into(), handoffs as f64);
    Ok(o)
}
