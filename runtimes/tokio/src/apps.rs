// apps.rs — the application workloads (Negele et al. 2017, section 5, Table 1 and Fig. 10),
// matching workloads/apps/*.hpp: same parameters, timed interval (from before the first
// spawn to after the last join), start gate and self-checks. The monitor variant: where
// the C++ programs use a BoundedBuffer (mutex + two condition variables) these use
// sync::BoundedBuffer (the backend's mutex + two tokio::sync::Notify); where they use a
// one-slot Mailbox (two semaphores), sync::Mailbox (two tokio::sync::Semaphore); the News
// board's condition variable is a Notify (notify_waiters = broadcast); a join is an await
// of the task's JoinHandle. City and producer are one program for both variants
// (city_program, producer_program); the channel variant of the sieve and the ring is in
// channels.rs and shares their self-checks (sieve_outcome, ring_outcome) with these.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Notify;

use crate::channels::SharedChannel;
use crate::micro::capacity;
use crate::sync::{join_all, spawn_gated, BoundedBuffer, Gate, Lent, Lock, Mailbox, MutexKind, Padded};
use crate::{expect, first_failure, Ctx, Outcome};

fn ms(secs: f64) -> f64 {
    secs * 1e3
}

/// city_program — city's one program, expanded once per variant: $make_store(C) makes the
/// energy store, a type with `async fn put(&self, u8)` and `async fn take(&self) -> u8`. A
/// macro, so that each variant calls its own store's methods directly: rustc 1.63 has no
/// async methods in traits, and an enum of the two stores wraps every put and take in a
/// future of its own, which made the points measurably slower.
macro_rules! city_program {
    ($c:ident, $make_store:expr) => {{
        let c = $c;
        let (n, k, cp) = (c.size("N")?, c.i64("K")?, c.size("C")?);
        capacity(n + 1)?;
        let units = n as i64 * k;
        let river = Lock::new(c.mutex, 0i64);
        let store = ($make_store)(cp);
        let produced = AtomicI64::new(0);
        let consumed: Vec<Padded<AtomicI64>> = (0..n).map(|_| Padded(AtomicI64::new(0))).collect();
        let gate = Gate::new();
        // SAFETY: every task is awaited by join_all below before these are dropped.
        let (rv, st, pr, co, g) =
            unsafe { (Lent::new(&river), Lent::new(&store), Lent::new(&produced), Lent::new(&consumed), Lent::new(&gate)) };
        let start = Instant::now();
        let handles = spawn_gated(g, n + 1, move |i| async move {
            // Relaxed counters: each has one writer and is read after join_all.
            if i == 0 {
                for _ in 0..units {
                    rv.with(|d| *d += 1).await;
                    st.put(1).await;
                    pr.store(pr.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                }
                return;
            }
            let mine = &co[i - 1].0;
            for _ in 0..k {
                let e = st.take().await as i64;
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
        let mut o = Outcome { seconds: secs, value: ms(secs), check, ..Default::default() };
        o.counters.insert("threads".into(), (n + 1) as f64);
        Ok(o)
    }};
}

/// city — one power plant and N houses; the energy store is a buffer of capacity C (a
/// BoundedBuffer, or for via=channel a channels::SharedChannel), the river a mutex-guarded
/// counter. Self-check: produced = consumed = N*K, water = 2*N*K.
pub async fn city(c: Ctx) -> Result<Outcome, String> {
    let mutex = c.mutex;
    if c.channels {
        city_program!(c, |cp| SharedChannel::<u8>::new(cp))
    } else {
        city_program!(c, |cp| BoundedBuffer::<u8>::new(mutex, cp))
    }
}

/// sequential_primes — the primes in 2..=n by the sequential sieve (the reference).
pub fn sequential_primes(n: i64) -> Vec<i64> {
    let mut primes = Vec::new();
    if n < 2 {
        return primes;
    }
    let mut composite = vec![false; n as usize + 1];
    for i in 2..=n as usize {
        if composite[i] {
            continue;
        }
        primes.push(i as i64);
        let mut j = i * i;
        while j <= n as usize {
            composite[j] = true;
            j += i;
        }
    }
    primes
}

type Stage = Pin<Box<dyn Future<Output = ()> + Send>>;

/// stage — one sieve stage: take its prime p, spawn the next stage on a new buffer, pass
/// on the numbers not divisible by p, then the terminator 0, and await the stage it
/// spawned. The buffers are shared by exactly two stages, which outlive each other in no
/// fixed order, so they are Arcs.
fn stage(input: Arc<BoundedBuffer<i64>>, primes: Lent<Lock<Vec<i64>>>, kind: MutexKind, cp: usize) -> Stage {
    Box::pin(async move {
        let p = input.take().await;
        if p == 0 {
            return;
        }
        primes.with(|v| v.push(p)).await;
        let out = Arc::new(BoundedBuffer::new(kind, cp));
        let next = tokio::spawn(stage(out.clone(), primes, kind, cp));
        loop {
            let v = input.take().await;
            if v == 0 {
                break;
            }
            if v % p != 0 {
                out.put(v).await;
            }
        }
        out.put(0).await;
        if let Err(e) = next.await {
            panic!("sieve stage after {p} failed: {e}");
        }
    })
}

/// eratosthenes — the concurrent prime sieve: a generator feeds 2..=N and the terminator 0
/// into a BoundedBuffer of capacity C; the stages (above) filter. Self-check: the count and
/// sum of the primes equal a sequential sieve's.
pub async fn eratosthenes(c: Ctx) -> Result<Outcome, String> {
    let (n, cp) = (c.i64("N")?, c.size("C")?);
    let reference = sequential_primes(n);
    let primes = Lock::new(c.mutex, Vec::with_capacity(reference.len()));
    let first = Arc::new(BoundedBuffer::new(c.mutex, cp));
    let gate = Gate::new();
    let kind = c.mutex;
    // SAFETY: every stage is awaited (each by the stage before it, the first by join_all)
    // before `primes` and `gate` are dropped.
    let (pl, g) = unsafe { (Lent::new(&primes), Lent::new(&gate)) };
    let start = Instant::now();
    let mut handles = Vec::with_capacity(2);
    let gen_buf = first.clone();
    handles.push(tokio::spawn(async move {
        g.wait().await;
        for v in 2..=n {
            gen_buf.put(v).await;
        }
        gen_buf.put(0).await;
    }));
    let stage_buf = first.clone();
    handles.push(tokio::spawn(async move {
        g.wait().await;
        stage(stage_buf, pl, kind, cp).await;
    }));
    gate.go();
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    Ok(sieve_outcome(&c, secs, &primes.into_inner(), &reference))
}

/// sieve_outcome — the sieve's self-check (both variants): the count and sum of the primes
/// `found` equal the sequential sieve's (`reference`).
pub fn sieve_outcome(c: &Ctx, secs: f64, found: &[i64], reference: &[i64]) -> Outcome {
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
    let mut o = Outcome { seconds: secs, value: ms(secs), check, ..Default::default() };
    o.counters.insert("primes".into(), count as f64);
    o.counters.insert("threads".into(), (count + 2) as f64);
    o
}

/// mandelbrot_rows — the iterations of the points in rows [from, to) of the c x c grid
/// (the same floating-point operations as workloads/apps/mandelbrot.hpp).
fn mandelbrot_rows(c: i64, k: i64, from: i64, to: i64) -> i64 {
    let mut total = 0;
    let step = 3.0 / c as f64;
    for row in from..to {
        let ci = -1.5 + step * row as f64;
        for col in 0..c {
            let cr = -2.0 + step * col as f64;
            let (mut zr, mut zi) = (0.0f64, 0.0f64);
            let mut it = 0;
            while it < k && zr * zr + zi * zi <= 4.0 {
                let t = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = t;
                it += 1;
            }
            total += it;
        }
    }
    total
}

/// mandelbrot — a C x C grid split into N row blocks computed by N tasks, at most K
/// iterations per point. A task never yields while it computes: tokio does not preempt.
/// Self-check: the total iterations equal a sequential computation's.
pub async fn mandelbrot(c: Ctx) -> Result<Outcome, String> {
    let (n, cs, k) = (c.size("N")?, c.i64("C")?, c.i64("K")?);
    capacity(n)?;
    let iterations: Vec<Padded<AtomicI64>> = (0..n).map(|_| Padded(AtomicI64::new(0))).collect();
    let gate = Gate::new();
    // SAFETY: every task is awaited by join_all below before these are dropped.
    let (its, g) = unsafe { (Lent::new(&iterations), Lent::new(&gate)) };
    let nn = n as i64;
    let start = Instant::now();
    let handles = spawn_gated(g, n, move |t| async move {
        let t = t as i64;
        // Relaxed: one writer, read after join_all.
        its[t as usize].0.store(mandelbrot_rows(cs, k, t * cs / nn, (t + 1) * cs / nn), Ordering::Relaxed);
    });
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    let mut total: i64 = iterations.iter().map(|x| x.0.load(Ordering::Relaxed)).sum();
    if c.inject_fault {
        total += 1;
    }
    let mut o = Outcome {
        seconds: secs,
        value: ms(secs),
        check: expect("iterations", total, mandelbrot_rows(cs, k, 0, cs)),
        ..Default::default()
    };
    o.counters.insert("iterations".into(), total as f64);
    Ok(o)
}

fn matrix_a(i: i64, k: i64) -> i64 {
    (i * 31 + k * 17 + 3) % 19 - 9
}
fn matrix_b(k: i64, j: i64) -> i64 {
    (k * 13 + j * 29 + 7) % 19 - 9
}
fn matrix_weight(j: i64) -> i64 {
    j % 7 + 1
}

/// Rows — C's rows, written by the tasks: row i by exactly one task (rows are split into
/// disjoint blocks), read by the main task after join_all.
struct Rows(Vec<std::cell::UnsafeCell<f64>>);
// SAFETY: tasks write disjoint elements (see Rows); the join orders their writes before the
// main task's reads.
unsafe impl Sync for Rows {}

/// matrix — naive N x N C = A * B, rows split over M tasks. Self-check: every row's
/// weighted checksum equals the exact integer reference (see workloads/apps/matrix.hpp).
pub async fn matrix(c: Ctx) -> Result<Outcome, String> {
    let (n, m) = (c.size("N")?, c.size("M")?);
    capacity(m)?;
    let mut a = vec![0.0f64; n * n];
    let mut b = vec![0.0f64; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = matrix_a(i as i64, j as i64) as f64;
            b[i * n + j] = matrix_b(i as i64, j as i64) as f64;
        }
    }
    let cm = Rows((0..n * n).map(|_| std::cell::UnsafeCell::new(0.0)).collect());
    let gate = Gate::new();
    // SAFETY: every task is awaited by join_all below before these are dropped.
    let (la, lb, lc, g) = unsafe { (Lent::new(&a), Lent::new(&b), Lent::new(&cm), Lent::new(&gate)) };
    let start = Instant::now();
    let handles = spawn_gated(g, m, move |t| async move {
        for i in t * n / m..(t + 1) * n / m {
            for j in 0..n {
                let mut sum = 0.0;
                for k in 0..n {
                    sum += la[i * n + k] * lb[k * n + j];
                }
                // SAFETY: row i belongs to this task alone (see Rows).
                unsafe { *lc.0[i * n + j].get() = sum };
            }
        }
    });
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    let mut cm: Vec<f64> = cm.0.into_iter().map(|x| x.into_inner()).collect();
    if c.inject_fault && n > 0 {
        cm[(n / 2) * n + n / 3] += 1.0;
    }
    let ni = n as i64;
    let mut bx = vec![0i64; n];
    for k in 0..ni {
        for j in 0..ni {
            bx[k as usize] += matrix_b(k, j) * matrix_weight(j);
        }
    }
    let mut checksum = 0i64;
    for i in 0..ni {
        let (mut want, mut got) = (0i64, 0i64);
        for k in 0..ni {
            want += matrix_a(i, k) * bx[k as usize];
        }
        for j in 0..ni {
            got += cm[(i * ni + j) as usize] as i64 * matrix_weight(j);
        }
        let bad = expect(&format!("checksum of row {i}"), got, want);
        if !bad.is_empty() {
            return Ok(Outcome { seconds: secs, value: ms(secs), check: bad, ..Default::default() });
        }
        checksum += got;
    }
    let mut o = Outcome { seconds: secs, value: ms(secs), ..Default::default() };
    o.counters.insert("checksum".into(), checksum as f64);
    Ok(o)
}

/// digest — the splitmix64 finaliser (news.hpp, producer.hpp).
pub fn digest(msg: i64) -> u64 {
    let mut x = msg as u64;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

/// The News board: the count of published messages under the mutex; the messages
/// themselves in `slots`, written before the count that publishes them.
struct Board {
    count: Lock<usize>,
    published: Notify,
    // Relaxed: slot i is written once, before the count passes i under the mutex, and a
    // reader reads it only after it saw that count under the same mutex (whose unlock /
    // lock pair orders the write before the read).
    slots: Vec<AtomicI64>,
}

/// news — M reporters publish K messages each on a board (a mutex, a Notify broadcast
/// (notify_waiters) after each message, append-only slots); N customers read every
/// message once. Self-check: each customer read M*K messages with the right checksum.
pub async fn news(c: Ctx) -> Result<Outcome, String> {
    let (n, m, k) = (c.size("N")?, c.size("M")?, c.i64("K")?);
    capacity(n + m)?;
    let total = m * k as usize;
    let board = Board {
        count: Lock::new(c.mutex, 0),
        published: Notify::new(),
        slots: (0..total).map(|_| AtomicI64::new(0)).collect(),
    };
    struct Reader {
        read: AtomicI64,
        sum: AtomicU64,
    }
    let readers: Vec<Padded<Reader>> =
        (0..n).map(|_| Padded(Reader { read: AtomicI64::new(0), sum: AtomicU64::new(0) })).collect();
    let message = move |r: i64, j: i64| r * k + j + 1;
    let gate = Gate::new();
    // SAFETY: every task is awaited by join_all below before these are dropped.
    let (bd, rd, g) = unsafe { (Lent::new(&board), Lent::new(&readers), Lent::new(&gate)) };
    let start = Instant::now();
    let handles = spawn_gated(g, n + m, move |t| async move {
        if t < m {
            for j in 0..k {
                bd.count
                    .with(|count| {
                        bd.slots[*count].store(message(t as i64, j), Ordering::Relaxed);
                        *count += 1;
                    })
                    .await;
                bd.published.notify_waiters();
            }
            return;
        }
        let me = &rd[t - m].0;
        let (mut seen, mut read, mut sum) = (0usize, 0i64, 0u64);
        while seen < total {
            let mut upto = bd.count.with(|count| *count).await;
            if upto == seen {
                // No lost wake-up: the Notified is listed (enable) before the count is
                // read again, so a message published after that read is followed by a
                // notify_waiters() that wakes it.
                let notified = bd.published.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                upto = bd.count.with(|count| *count).await;
                if upto == seen {
                    notified.await;
                    continue;
                }
            }
            while seen < upto {
                sum = sum.wrapping_add(digest(bd.slots[seen].load(Ordering::Relaxed)));
                read += 1;
                seen += 1;
            }
        }
        // Relaxed: one writer, read after join_all.
        me.read.store(read, Ordering::Relaxed);
        me.sum.store(sum, Ordering::Relaxed);
    });
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    let mut want_sum = 0u64;
    for r in 0..m as i64 {
        for j in 0..k {
            want_sum = want_sum.wrapping_add(digest(message(r, j)));
        }
    }
    if c.inject_fault && n > 0 {
        let s = &readers[n / 2].0.sum;
        s.store(s.load(Ordering::Relaxed).wrapping_sub(1), Ordering::Relaxed);
    }
    let mut check = String::new();
    for (i, r) in readers.iter().enumerate() {
        let who = format!("customer {i}");
        check = first_failure(&[
            expect(&format!("{who} messages read"), r.0.read.load(Ordering::Relaxed), total as i64),
            expect(&format!("{who} checksum"), r.0.sum.load(Ordering::Relaxed), want_sum),
        ]);
        if !check.is_empty() {
            break;
        }
    }
    let mut o = Outcome { seconds: secs, value: ms(secs), check, ..Default::default() };
    o.counters.insert("threads".into(), (n + m) as f64);
    Ok(o)
}

/// producer_program — producer's one program, expanded once per variant (as city_program):
/// $make_buffer(C) makes the buffer, a type with `async fn put(&self, i64)` and
/// `async fn take(&self) -> i64`.
macro_rules! producer_program {
    ($c:ident, $make_buffer:expr) => {{
        let c = $c;
        let (n, cp, k) = (c.size("N")?, c.size("C")?, c.i64("K")?);
        capacity(2 * n)?;
        let buffer = ($make_buffer)(cp);
        #[derive(Default)]
        struct Tally {
            count: AtomicI64,
            sum: AtomicI64,
            hash: AtomicU64,
        }
        let tallies: Vec<Padded<Tally>> = (0..n).map(|_| Padded::default()).collect();
        let gate = Gate::new();
        // SAFETY: every task is awaited by join_all below before these are dropped.
        let (buf, ts, g) = unsafe { (Lent::new(&buffer), Lent::new(&tallies), Lent::new(&gate)) };
        let start = Instant::now();
        let handles = spawn_gated(g, 2 * n, move |t| async move {
            if t < n {
                let base = t as i64 * k;
                for j in 1..=k {
                    buf.put(base + j).await;
                }
                return;
            }
            let (mut count, mut sum, mut hash) = (0i64, 0i64, 0u64);
            for _ in 0..k {
                let v = buf.take().await;
                count += 1;
                sum += v;
                hash = hash.wrapping_add(digest(v));
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
        let want_hash = (1..=messages).fold(0u64, |h, v| h.wrapping_add(digest(v)));
        if c.inject_fault {
            sum += 1;
        }
        let check = first_failure(&[
            expect("messages consumed", count, messages),
            expect("sum consumed", sum, messages * (messages + 1) / 2),
            expect("hash of consumed", hash, want_hash),
        ]);
        let mut o = Outcome { seconds: secs, value: ms(secs), check, ..Default::default() };
        o.counters.insert("threads".into(), (2 * n) as f64);
        Ok(o)
    }};
}

/// producer — N producers and N consumers exchange K messages each through one buffer of
/// capacity C (a BoundedBuffer, or for via=channel a channels::SharedChannel). Self-check:
/// count, sum and hash-sum of the consumed messages.
pub async fn producer(c: Ctx) -> Result<Outcome, String> {
    let mutex = c.mutex;
    if c.channels {
        producer_program!(c, |cp| SharedChannel::<i64>::new(cp))
    } else {
        producer_program!(c, |cp| BoundedBuffer::<i64>::new(mutex, cp))
    }
}

/// tokenring — N tasks in a ring, each with a one-slot Mailbox, pass a counter K times
/// around. Self-check: final counter and hand-offs = N*K, no player saw the token out of
/// ring order.
pub async fn tokenring(c: Ctx) -> Result<Outcome, String> {
    let (n, k) = (c.size("N")?, c.i64("K")?);
    capacity(n)?;
    let boxes: Vec<Mailbox> = (0..n).map(|_| Mailbox::new()).collect();
    let players: Vec<Padded<Player>> = (0..n).map(|_| Padded::default()).collect();
    let gate = Gate::new();
    // SAFETY: every task is awaited by join_all below before these are dropped.
    let (bx, pl, g) = unsafe { (Lent::new(&boxes), Lent::new(&players), Lent::new(&gate)) };
    let nn = n as i64;
    let start = Instant::now();
    let handles = spawn_gated(g, n, move |i| async move {
        let (mut handoffs, mut out_of_order) = (0i64, 0i64);
        let next = &bx[(i + 1) % n];
        for round in 0..k {
            let token = bx[i].take().await;
            if token != i as i64 + round * nn {
                out_of_order += 1;
            }
            next.put(token + 1).await;
            handoffs += 1;
        }
        // Relaxed: one writer, read after join_all.
        pl[i].0.handoffs.store(handoffs, Ordering::Relaxed);
        pl[i].0.out_of_order.store(out_of_order, Ordering::Relaxed);
    });
    if n > 0 {
        boxes[0].put(0).await;
    }
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    let fin = if n > 0 { boxes[0].take().await } else { 0 };
    Ok(ring_outcome(&c, secs, fin, &players, k))
}

/// Player — what one player of the ring counted (written once by its task, read after the join).
#[derive(Default)]
pub struct Player {
    pub handoffs: AtomicI64,
    pub out_of_order: AtomicI64,
}

/// ring_outcome — the ring's self-check (both variants): the final token and the hand-offs
/// are N*K, no player saw the token out of ring order.
pub fn ring_outcome(c: &Ctx, secs: f64, fin: i64, players: &[Padded<Player>], k: i64) -> Outcome {
    let nn = players.len() as i64;
    let mut fin = fin;
    let (mut handoffs, mut out_of_order) = (0i64, 0i64);
    for p in players {
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
    let mut o = Outcome { seconds: secs, value: ms(secs), check, ..Default::default() };
    o.counters.insert("handoffs".into(), handoffs as f64);
    o
}
