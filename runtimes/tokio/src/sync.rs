// sync.rs — the building blocks the workloads share, in tokio's idiom: a mutex that is
// either tokio::sync::Mutex or std::sync::Mutex (the backend's variant), the two start
// gates of workloads/common.hpp, the apps' BoundedBuffer and Mailbox of
// workloads/apps/channel.hpp (a monitor: mutex + tokio::sync::Notify; two
// tokio::sync::Semaphores), and Lent, which lets spawned tasks borrow the workload's data
// the way the C++ threads hold pointers into run()'s frame.
use std::future::Future;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinHandle;

/// Which mutex the workloads lock: the backend `tokio` uses tokio::sync::Mutex (a fair,
/// FIFO, asynchronous mutex on tokio's batch semaphore: a waiter is a parked task), the
/// backend `tokio-std-mutex` std::sync::Mutex (a futex lock: a waiter blocks its worker
/// thread, which tokio's documentation recommends when the critical section is short and
/// never held across an `.await`, as in every workload here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutexKind {
    Tokio,
    Std,
}

/// Lock — one of the two mutexes around a T. Every critical section of the workloads is
/// synchronous (a closure run with the lock held), so both work the same way.
pub enum Lock<T> {
    Tokio(tokio::sync::Mutex<T>),
    Std(std::sync::Mutex<T>),
}

fn with_std<T, R>(m: &std::sync::Mutex<T>, f: impl FnOnce(&mut T) -> R) -> R {
    // A poisoned mutex means a task panicked inside; that task's JoinHandle reports it.
    let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
    f(&mut g)
}

impl<T> Lock<T> {
    pub fn new(kind: MutexKind, value: T) -> Self {
        match kind {
            MutexKind::Tokio => Lock::Tokio(tokio::sync::Mutex::new(value)),
            MutexKind::Std => Lock::Std(std::sync::Mutex::new(value)),
        }
    }

    /// with — run `f` on the value with the lock held; waiting for the lock is an `.await`
    /// for tokio's mutex and a blocked worker thread for std's.
    pub async fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        match self {
            Lock::Tokio(m) => {
                let mut g = m.lock().await;
                f(&mut g)
            }
            Lock::Std(m) => with_std(m, f),
        }
    }

    pub fn into_inner(self) -> T {
        match self {
            Lock::Tokio(m) => m.into_inner(),
            Lock::Std(m) => m.into_inner().unwrap_or_else(|e| e.into_inner()),
        }
    }
}

/// Lent — a shared reference the workload's main task hands to the tasks it spawns, as the
/// C++ threads get pointers into run()'s frame. tokio::spawn needs 'static futures; an Arc
/// would add a shared reference count that every spawned task increments and decrements
/// (a contended cache line inside `create`'s timed loop), which the other backends do not
/// pay. Copy, Send and Sync when T is Sync.
pub struct Lent<T>(*const T);

impl<T> Clone for Lent<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Lent<T> {}
// SAFETY: a Lent only hands out &T, which may cross threads when T is Sync.
unsafe impl<T: Sync> Send for Lent<T> {}
unsafe impl<T: Sync> Sync for Lent<T> {}

impl<T> Lent<T> {
    /// new — lend `value` to tasks.
    ///
    /// # Safety
    /// `value` must outlive every task that holds the Lent: its owner awaits all of them
    /// (join_all, which awaits every handle even after a failure) before `value` is
    /// dropped or moved.
    pub unsafe fn new(value: &T) -> Self {
        Lent(value as *const T)
    }
}

impl<T> Deref for Lent<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: see `new`: the owner keeps the value alive until every borrower is joined.
        unsafe { &*self.0 }
    }
}

/// join_all — await every handle (the C++ Group::join_all), all of them even after one
/// failed, so nothing lent to them is dropped while they run; the first failure is the
/// error. Joining publishes everything a task wrote: its completion is released by the
/// task's state transition and acquired by the JoinHandle that reads its output.
pub async fn join_all(handles: Vec<JoinHandle<()>>) -> Result<(), String> {
    let mut first = Ok(());
    for h in handles {
        if let Err(e) = h.await {
            if first.is_ok() {
                first = Err(format!("a task failed: {e}"));
            }
        }
    }
    first
}

/// SpinGate — GateWait::spin of workloads/common.hpp: tasks poll a flag, yielding, until
/// the clock starts, so at the start of the interval they are all runnable.
pub struct SpinGate {
    open: AtomicBool,
}

impl SpinGate {
    pub fn new() -> Self {
        SpinGate { open: AtomicBool::new(false) }
    }
    pub async fn wait(&self) {
        // Acquire: pairs with go()'s Release store, so what the spawner wrote before
        // opening the gate is visible to the task that sees it open.
        while !self.open.load(Ordering::Acquire) {
            tokio::task::yield_now().await;
        }
    }
    pub fn go(&self) {
        // Release: see wait().
        self.open.store(true, Ordering::Release);
    }
}

/// Gate — GateWait::block of workloads/common.hpp: tasks park on a Notify until the
/// spawner opens it (the apps: thousands of tasks that must not burn the workers while the
/// rest are spawned). tokio::spawn cannot fail (it aborts the process on allocation
/// failure), so the C++ gate's abort path has no counterpart.
pub struct Gate {
    open: AtomicBool,
    opened: Notify,
}

impl Gate {
    pub fn new() -> Self {
        Gate { open: AtomicBool::new(false), opened: Notify::new() }
    }
    pub async fn wait(&self) {
        // Acquire: pairs with go()'s Release store (the spawner's writes before go() are
        // visible here).
        if self.open.load(Ordering::Acquire) {
            return;
        }
        let notified = self.opened.notified();
        tokio::pin!(notified);
        // No lost wake-up: a Notified counts the notify_waiters() calls from its creation
        // on, and enable() puts it on the waiter list under the Notify's own mutex, which
        // go()'s notify_waiters() also takes. Either go()'s notify_waiters() comes after
        // this task was listed (it wakes the task), or it came first, and then go()'s store
        // happened before this load through that mutex (the load sees the gate open).
        notified.as_mut().enable();
        if self.open.load(Ordering::Acquire) {
            return;
        }
        notified.await;
    }
    pub fn go(&self) {
        // Release: see wait().
        self.open.store(true, Ordering::Release);
        self.opened.notify_waiters();
    }
}

/// spawn_gated — spawn `n` tasks running body(i) behind a blocking Gate, then open it
/// (workloads/common.hpp's spawn_gated); returns their handles for join_all.
pub fn spawn_gated<F, Fut>(gate: Lent<Gate>, n: usize, body: F) -> Vec<JoinHandle<()>>
where
    F: Fn(usize) -> Fut + Copy + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut handles = Vec::with_capacity(n);
    for i in 0..n {
        handles.push(tokio::spawn(async move {
            gate.wait().await;
            let work = body(i);
            work.await
        }));
    }
    gate.go();
    handles
}

/// A fixed-capacity FIFO ring, the state of a BoundedBuffer (guarded by its Lock).
struct Ring<T> {
    slots: Vec<T>,
    head: usize,
    count: usize,
}

impl<T: Copy + Default> Ring<T> {
    fn try_put(&mut self, v: T) -> bool {
        let cap = self.slots.len();
        if self.count == cap {
            return false;
        }
        self.slots[(self.head + self.count) % cap] = v;
        self.count += 1;
        true
    }
    fn try_take(&mut self) -> Option<T> {
        if self.count == 0 {
            return None;
        }
        let v = self.slots[self.head];
        self.head = (self.head + 1) % self.slots.len();
        self.count -= 1;
        Some(v)
    }
}

/// BoundedBuffer — workloads/apps/channel.hpp's BoundedBuffer as a monitor in tokio: a ring
/// of `capacity` values under a Lock, and two Notifys (not_full, not_empty) for its two
/// condition variables. put() waits while full, take() while empty; each re-checks its
/// predicate after every wake-up (a stored notify_one permit may wake it spuriously; a
/// value may be taken by a task that did not wait), and each notifies the other side after
/// changing the count.
///
/// No lost wake-up: a waiter enables its Notified (lists itself as a waiter) *before* it
/// re-checks the predicate under the lock, so a change made after that check is followed
/// by a notify_one that finds it listed; a notify_one that finds nobody listed stores a
/// permit for the next waiter. A listed waiter that then succeeds without waiting drops
/// its Notified, and tokio hands a notify_one it had received on to the next waiter.
pub struct BoundedBuffer<T> {
    ring: Lock<Ring<T>>,
    not_full: Notify,  // notified after a take
    not_empty: Notify, // notified after a put
}

impl<T: Copy + Default> BoundedBuffer<T> {
    pub fn new(kind: MutexKind, capacity: usize) -> Self {
        assert!(capacity >= 1, "BoundedBuffer: capacity must be >= 1");
        BoundedBuffer {
            ring: Lock::new(kind, Ring { slots: vec![T::default(); capacity], head: 0, count: 0 }),
            not_full: Notify::new(),
            not_empty: Notify::new(),
        }
    }

    /// put — append `v`, waiting while the buffer is full.
    pub async fn put(&self, v: T) {
        loop {
            if self.ring.with(|r| r.try_put(v)).await {
                break;
            }
            let notified = self.not_full.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.ring.with(|r| r.try_put(v)).await {
                break;
            }
            notified.await;
        }
        self.not_empty.notify_one();
    }

    /// take — remove and return the oldest value, waiting while the buffer is empty.
    pub async fn take(&self) -> T {
        let v = loop {
            if let Some(v) = self.ring.with(|r| r.try_take()).await {
                break v;
            }
            let notified = self.not_empty.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(v) = self.ring.with(|r| r.try_take()).await {
                break v;
            }
            notified.await;
        };
        self.not_full.notify_one();
        v
    }
}

/// Mailbox — workloads/apps/channel.hpp's one-slot Mailbox on two tokio::sync::Semaphores
/// (empty = 1, full = 0): put() takes the empty permit, writes the slot, releases full;
/// take() the reverse.
pub struct Mailbox {
    empty: Semaphore,
    full: Semaphore,
    // Relaxed is enough: the slot is written only by the holder of the empty permit and
    // read only by the holder of the full permit, and the semaphore hands a permit over
    // with a release (add_permits) / acquire (acquire) pair that orders the write before
    // the read.
    slot: std::sync::atomic::AtomicI64,
}

impl Mailbox {
    pub fn new() -> Self {
        Mailbox { empty: Semaphore::new(1), full: Semaphore::new(0), slot: std::sync::atomic::AtomicI64::new(0) }
    }
    pub async fn put(&self, v: i64) {
        self.empty.acquire().await.expect("mailbox semaphore closed").forget();
        self.slot.store(v, Ordering::Relaxed);
        self.full.add_permits(1);
    }
    pub async fn take(&self) -> i64 {
        self.full.acquire().await.expect("mailbox semaphore closed").forget();
        let v = self.slot.load(Ordering::Relaxed);
        self.empty.add_permits(1);
        v
    }
}

/// Padded — a value on its own cache line (per-task counters without false sharing).
#[repr(align(64))]
#[derive(Default)]
pub struct Padded<T>(pub T);
