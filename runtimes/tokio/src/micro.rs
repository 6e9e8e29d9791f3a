// micro.rs — the microbenchmarks (Negele et al. 2017, section 6, Figs. 7-9), matching
// workloads/micro/{create,switch,lock}.hpp: same parameters, timed interval, self-checks.
use std::sync::atomic::{AtomicI64, AtomicU8, Ordering};
use std::time::Instant;

use crate::sync::{join_all, Lent, Lock, Padded, SpinGate};
use crate::{expect, Ctx, Outcome, REFUSED};

/// TASK_BYTES — what one live task costs at least, rounded up: tokio's task cell (header,
/// scheduler handle, the future's state, trailer; 200-300 bytes for these small futures)
/// plus its JoinHandle and the allocator's rounding. Used only for the capacity check.
const TASK_BYTES: usize = 512;

/// capacity — why n live tasks may not fit in memory (Ok = they fit): more than half of
/// MemAvailable refuses the point cleanly (an Err beginning with REFUSED: the reply's status
/// is "refused") instead of taking the (shared) machine down, as the C++ backends'
/// capacity() and the go backend's do.
pub fn capacity(n: usize) -> Result<(), String> {
    let info = match std::fs::read_to_string("/proc/meminfo") {
        Ok(s) => s,
        Err(_) => return Ok(()),
    };
    for line in info.lines() {
        if let Some(rest) = line.strip_prefix("MemAvailable:") {
            let kib: usize = rest.trim().trim_end_matches("kB").trim().parse().unwrap_or(usize::MAX / 2048);
            let need = n.saturating_mul(TASK_BYTES);
            if need > kib.saturating_mul(1024) / 2 {
                return Err(format!(
                    "{REFUSED}{n} tasks need about {:.1} GiB, more than half of MemAvailable ({:.1} GiB)",
                    need as f64 / (1u64 << 30) as f64,
                    kib as f64 / (1u64 << 20) as f64
                ));
            }
            return Ok(());
        }
    }
    Ok(())
}

/// create — spawn N tasks (tokio::spawn) whose body sets its own flag, then await every
/// JoinHandle. Value: ns per task, from before the first spawn to after the last join.
/// Self-check: every task ran once. The main task spawns without awaiting, so at P = 1 all
/// N tasks are alive before the first runs (as the C++ threads until joined): the capacity
/// check applies.
pub async fn create(c: Ctx) -> Result<Outcome, String> {
    let n = c.size("N")?;
    capacity(n)?;
    let ran: Vec<AtomicU8> = (0..n).map(|_| AtomicU8::new(0)).collect();
    // SAFETY: every task is awaited by join_all below before `ran` is dropped.
    let flags = unsafe { Lent::new(&ran) };
    let mut handles = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        // Relaxed: each flag has one writer; join_all's await of the task's JoinHandle
        // orders the store before the count below.
        handles.push(tokio::spawn(async move { flags[i].store(1, Ordering::Relaxed) }));
    }
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    if c.inject_fault && n > 0 {
        ran[n / 2].store(0, Ordering::Relaxed);
    }
    let count = ran.iter().filter(|f| f.load(Ordering::Relaxed) == 1).count() as i64;
    Ok(Outcome {
        seconds: secs,
        value: secs * 1e9 / n as f64,
        check: expect("threads that ran", count, n as i64),
        ..Default::default()
    })
}

/// switch — T tasks each call tokio::task::yield_now() K times behind a spin gate (they
/// poll a flag, yielding, until the clock starts, as the C++ Gate). Value: ns per switch =
/// elapsed / (T*K), from opening the gate to the last join. Self-check: the yields add up
/// to T*K.
pub async fn switch(c: Ctx) -> Result<Outcome, String> {
    let (t, k) = (c.size("T")?, c.i64("K")?);
    capacity(t)?;
    let yields: Vec<Padded<AtomicI64>> = (0..t).map(|_| Padded(AtomicI64::new(0))).collect();
    let gate = SpinGate::new();
    // SAFETY: every task is awaited by join_all below before `yields` and `gate` are dropped.
    let (ys, g) = unsafe { (Lent::new(&yields), Lent::new(&gate)) };
    let mut handles = Vec::with_capacity(t);
    for i in 0..t {
        handles.push(tokio::spawn(async move {
            g.wait().await;
            let mine = &ys[i].0;
            for _ in 0..k {
                tokio::task::yield_now().await;
                // Relaxed load + store, not an atomic add: this task is the counter's only
                // writer (a plain increment, as the C++), read after join_all.
                mine.store(mine.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
        }));
    }
    let start = Instant::now();
    gate.go();
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    let mut total: i64 = yields.iter().map(|y| y.0.load(Ordering::Relaxed)).sum();
    if c.inject_fault {
        total -= 1;
    }
    let ops = t as i64 * k;
    Ok(Outcome {
        seconds: secs,
        value: secs * 1e9 / ops as f64,
        check: expect("yields", total, ops),
        ..Default::default()
    })
}

/// lock — T tasks each lock and unlock a mutex K times, incrementing the counter it
/// guards: their own (lock-local) or one shared mutex (lock-global). The mutex is
/// tokio::sync::Mutex (backend tokio) or std::sync::Mutex (backend tokio-std-mutex). Value:
/// ns per lock+unlock pair. Self-check: the counters add up to T*K.
pub async fn lock(c: Ctx, global: bool) -> Result<Outcome, String> {
    let (t, k) = (c.size("T")?, c.i64("K")?);
    capacity(t)?;
    let nslots = if global { 1 } else { t };
    let slots: Vec<Padded<Lock<i64>>> = (0..nslots).map(|_| Padded(Lock::new(c.mutex, 0))).collect();
    let gate = SpinGate::new();
    // SAFETY: every task is awaited by join_all below before `slots` and `gate` are dropped.
    let (ss, g) = unsafe { (Lent::new(&slots), Lent::new(&gate)) };
    let mut handles = Vec::with_capacity(t);
    for i in 0..t {
        handles.push(tokio::spawn(async move {
            g.wait().await;
            let s = &ss[if global { 0 } else { i }].0;
            for _ in 0..k {
                s.with(|counter| *counter += 1).await;
            }
        }));
    }
    let start = Instant::now();
    gate.go();
    join_all(handles).await?;
    let secs = start.elapsed().as_secs_f64();
    let mut total: i64 = slots.into_iter().map(|s| s.0.into_inner()).sum();
    if c.inject_fault {
        total += 1;
    }
    let ops = t as i64 * k;
    Ok(Outcome {
        seconds: secs,
        value: secs * 1e9 / ops as f64,
        check: expect("critical sections", total, ops),
        ..Default::default()
    })
}
