/* park_notify.pml — a Spin model of coop's park/wake protocol (coop/include/coop/park.hpp).
 *
 * Processor 0 (Waker) makes one unit of work ready ROUNDS times and each time waits until
 * another processor has taken it (a program that needs two processors at once); processors
 * 1..NPARKERS (Parker) take work when there is some and park when there is none. Promela's
 * interleaving makes every access sequentially consistent, which is what park.hpp's seq_cst
 * atomics and fences give. futex_wait is atomic "sleep if the word still holds the value"
 * (the kernel's check), futex_wake clears the sleeper's flag. No timeouts, no spurious
 * wake-ups (they could only hide a lost wake-up).
 *
 * Checked: no lost wake-up — every process ends or rests at an end label; a Waker blocked
 * for ever on its unit while the Parkers sleep is an invalid end state. At the end the
 * token is free (assert in the final check) so later wake-ups are not suppressed.
 *
 * -DOLD_PROTOCOL models the earlier protocol of coop (one shared epoch futex, a
 * `working` count, a `waking` flag that every returning parker clears); Spin must find its
 * lost wake-up (the waking flag left set after a parker found work on its own).
 *
 * -DTSO: x86-TSO instead of sequential consistency (Sewell et al., "x86-TSO: a rigorous and
 * usable programmer's model for x86 multiprocessors", CACM 2010, Sect. 3; the usual Promela
 * encoding: a FIFO store buffer per processor, drained to memory by a process of its own at
 * any moment, emptied before a fence or a locked instruction, and read by its own processor's
 * loads first). Only the Waker's publication of work is a plain store in coop (native-ws's
 * ring: a relaxed slot store and a release store of tail_ or runnext_; parasail's deque
 * likewise), so only it goes through the buffer: `pub` in memory, `pub_buf`/`buffered` the
 * Waker's buffer (one entry is enough: the Waker stores again only after a parker took the
 * unit, which needs the store drained). Every other store of park.hpp is a seq_cst store
 * (xchg on x86), a locked RMW or followed by a fence, so it reaches memory at once: modelled
 * as plain assignments. Under TSO:
 *   -DBUG_WAKER_NO_FENCE  wake_one() without its leading fence (the waker's half of the
 *                         Dekker pair): Spin must find the lost wake-up (the fence-less
 *                         waker's load of parked_ passes its buffered publication);
 *   -DYIELD               the Waker publishes as Scheduler<A>::yielded does (push, then a
 *                         look at parked_ of its own, notify() only if it is not 0);
 *   -DYIELD -DBUG_YIELD_NO_FENCE  that look without the fence before it (coop before the
 *                         fix): Spin must find the lost wake-up. Under sequential
 *                         consistency (no -DTSO) the same mutant passes: why the SC model
 *                         could not see the defect.
 *
 * -DTIMER: the timers' side of the protocol (timers.cpp, worker.cpp idle loop, more_work)
 * instead of the Waker's rounds. The Waker is a processor whose activity went to sleep: its
 * push_timer lowers `earliest` (earliest_ns, CAS-min: a locked instruction, so under -DTSO
 * too it reaches memory at once, no store buffer) and calls notify(); then it runs an
 * activity for good. Parker 1 is idle: it polls the timers (fires the sleeper once the
 * deadline has passed, `past`, set by Clock at any moment), reads its futex timeout from
 * `earliest` (`to`; INF: none) in one step, and in a LATER step parks; its re-check after
 * the fence is "a deadline below the one my timeout came from" (earliest < to); its futex
 * sleep ends on a wake-up or, with a timeout, once the deadline has passed. Checked: when
 * nothing can move, the sleeper was fired (Final). -DBUG_TIMER_PAST_ONLY: the re-check asks
 * only "has a deadline passed?" (coop before the fix): Spin must find the parker asleep with
 * no timeout beside the pending timer (its timeout read before the push, the pusher's notify
 * before its announcement). No reordering is involved, so the TSO and SC answers are the same.
 *
 * -DWAKERS=2: two Waker processes, each publishing ROUNDS units with notify() (no waiting for
 * its unit: a waker that ends is a processor that went on with something else); checked:
 * when nothing can move, every unit was taken. This is what part (b) of park.hpp is for: a
 * second waker that skips because the token is held (a wake-up in flight) relies on the
 * holder, who found nobody parked (the parker left on its own) and gave the token back, to
 * look at parked_ again. -DBUG_NO_RETRY (wake_one returns right after giving the token back,
 * the review's mutant wake_one_no_retry) must fail there: the holder scanned while the
 * parker was running, the parker parks again, the second waker publishes and skips on the
 * token, the holder leaves; the parker sleeps beside the unit. With one Waker the same
 * mutant passes at every size (nobody can skip on the token): why one waker was not enough.
 * Sequential consistency only (no -DTSO, -DYIELD, -DTIMER or -DOLD_PROTOCOL with it).
 *
 * What this still abstracts away: ARM/POWER's weaker orders (loads reordered with loads,
 * stores with stores, non-multi-copy-atomic stores): coop's C++ orders, not this model, are
 * what hold there, and TSan (test_park_tso, ParkNotify under the tsan preset) checks the
 * C++ model's happens-before, not reorderings. The real store-buffer window is covered by
 * test_park_tso.cpp (two pinned threads on the real Scheduler<A>); the timers' re-check
 * (-DTIMER, a window with no reordering) on the real runtime by test_timer_park.cpp (a hook
 * pushes a timer between the timeout's read and the park).
 */

#ifndef NPARKERS
#define NPARKERS 2
#endif
#ifndef ROUNDS
#define ROUNDS 3
#endif
#ifndef WAKERS
#define WAKERS 1
#endif
#if WAKERS > 1 && (defined(TSO) || defined(YIELD) || defined(TIMER) || defined(OLD_PROTOCOL))
#error "WAKERS > 1 is modelled under sequential consistency, with notify() only"
#endif
#define NPROC (NPARKERS + WAKERS)   /* pids: the Wakers 0..WAKERS-1, then the Parkers */

#define RUNNING 0
#define PARKED 1
#define WOKEN 2

byte work = 0;     /* units ready (sequentially consistent models) */
byte taken = 0;    /* units taken by parkers */
bit sleeping[NPROC];

#if defined(TSO) && !defined(OLD_PROTOCOL)
byte pub = 0;      /* units published, in memory (the ring's tail) */
byte pub_buf = 0;  /* the Waker's store buffer: one pending store of pub */
bit buffered = 0;
#define PUBLISH(r)  pub_buf = (r) + 1; buffered = 1
#define HAS_WORK    (pub > taken)
#define TAKE        pub > taken -> taken++
#define DRAINED     (buffered == 0)   /* a fence or a locked instruction waits for it */
#else
#define PUBLISH(r)  work++
#define HAS_WORK    (work > 0)
#define TAKE        work > 0 -> work--; taken++
#define DRAINED     true
#endif

#ifdef TIMER
#define INF 255
byte earliest = INF;  /* RuntimeState::earliest_ns: one sleeper, deadline 1 */
bit past = 0;         /* the deadline has passed */
bit fired = 0;        /* the sleeper was woken by a poll */
#ifdef BUG_TIMER_PAST_ONLY
#define RECHECK       (HAS_WORK || (past && earliest != INF))
#else
#define RECHECK       (HAS_WORK || earliest < to)
#endif
#define ASLEEP_ENDS   (sleeping[me] == 0 || (to != INF && past))
#else
#define RECHECK       HAS_WORK
#define ASLEEP_ENDS   (sleeping[me] == 0)
#endif

#ifndef OLD_PROTOCOL
byte state[NPROC];   /* per-processor futex words */
byte parked = 0;
bit token = 0;

inline park(me) {
    state[me] = PARKED;
    parked++;
    if
    :: RECHECK -> skip
    :: else ->
        atomic { if :: state[me] == PARKED -> sleeping[me] = 1 :: else -> skip fi };
end_asleep:
        ASLEEP_ENDS;
        sleeping[me] = 0
    fi;
    atomic { s = state[me]; state[me] = RUNNING };
    if
    :: s == PARKED -> parked--
    :: s == WOKEN -> token = 0
    :: else -> skip
    fi
}

inline notify() {
#ifndef BUG_WAKER_NO_FENCE
    DRAINED;   /* wake_one()'s seq_cst fence */
#endif
    if
    :: parked == 0 -> skip
    :: else ->
        do
        :: atomic { DRAINED -> t = token; token = 1 };   /* locked: drains the buffer */
           if
           :: t == 1 -> break
           :: else -> skip
           fi;
           found = 0;
           i = WAKERS;
           do
           :: i < NPROC ->
               atomic { if :: state[i] == PARKED -> state[i] = WOKEN; found = 1 :: else -> skip fi };
               if
               :: found == 1 -> parked--; sleeping[i] = 0; break
               :: else -> i++
               fi
           :: else -> break
           od;
           if
           :: found == 1 -> break
           :: else ->
               token = 0;   /* give the token back, then look again (b) */
#ifdef BUG_NO_RETRY
               break
#else
               if
               :: parked == 0 -> break
               :: else -> skip
               fi
#endif
           fi
        od
    fi
}
#else
byte epoch = 0;
byte working = NPROC;
bit waking = 0;

inline park(me) {
    e = epoch;
    working--;
    if
    :: work > 0 -> skip
    :: else ->
        atomic { if :: epoch == e -> sleeping[me] = 1 :: else -> skip fi };
end_asleep:
        sleeping[me] == 0
    fi;
    working++;
    waking = 0
}

inline notify() {
    if
    :: working >= NPROC -> skip
    :: else ->
        atomic { t = waking; waking = 1 };
        if
        :: t == 1 -> skip
        :: else ->
            epoch++;
            atomic {   /* futex_wake(1): one sleeper, any */
                i = WAKERS;
                do
                :: i < NPROC && sleeping[i] == 1 -> sleeping[i] = 0; break
                :: i < NPROC && sleeping[i] == 0 -> i++
                :: i >= NPROC -> break
                od
            }
        fi
    fi
}
#endif

active [WAKERS] proctype Waker() {
    byte r = 0, t = 0, i = 0;
    bit found = 0;
#ifdef TIMER
    earliest = 1;   /* push_timer: the entry pushed, lower_earliest (locked CAS) */
    notify();       /* then runs an activity for good */
    goto done;
#endif
    do
    :: r < ROUNDS ->
        PUBLISH(r);
#ifndef YIELD
        notify();
#else
        /* Scheduler<A>::yielded: its own look at parked_, then notify() */
#ifndef BUG_YIELD_NO_FENCE
        DRAINED;   /* the yield's seq_cst fence */
#endif
        if
        :: parked != 0 -> notify()
        :: else -> skip
        fi;
#endif
#if WAKERS == 1
        taken > r;   /* wait until another processor took it */
#endif
        r++
    :: else -> break
    od;
done:
    skip
}

active [NPARKERS] proctype Parker() {
    byte me = _pid;   /* WAKERS..NPROC-1 (the Wakers come first) */
    byte s = 0, e = 0;
#ifdef TIMER
    byte to = INF;
end_idle:
    do
    :: atomic { past && earliest != INF -> fired = 1; earliest = INF }   /* poll_timers */
    :: atomic { !(past && earliest != INF) -> to = earliest };   /* the timeout, read first */
        park(me)
    od
#else
end_idle:
    do
    :: atomic { TAKE }
    :: atomic { !HAS_WORK -> skip };
        park(me)
    od
#endif
}

#ifdef TIMER
active proctype Clock() { past = 1 }
#endif

#if defined(TSO) && !defined(OLD_PROTOCOL)
/* The Waker's store buffer drains to memory at any moment (oldest first; one entry here). */
active proctype Drain() {
end_drain:
    do
    :: atomic { buffered == 1 -> pub = pub_buf; buffered = 0 }
    od
}
#endif

#ifndef OLD_PROTOCOL
/* When nothing can move any more, the token must be free (else every later notify() would
 * be skipped) and nobody may count as parked without sleeping. */
active proctype Final() {
    timeout ->
        assert(token == 0);
#ifdef TIMER
        assert(fired == 1)
#else
        assert(taken == WAKERS * ROUNDS)
#endif
}
#endif
