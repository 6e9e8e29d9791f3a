/* local_park.pml — a Spin model of coop's park/wake protocol (runtimes/native/park.hpp) as the
 * processor-local policies use it (native-ws, native-parasail: runtimes/native/ws/dispatch.cpp,
 * ws/scheduler_select.hpp, worker.cpp's idle loop). Issue 10: "no processor left parked while
 * work is queued".
 *
 * What models/park_notify.pml does not cover: work made ready on processor A goes into A's
 * OWN queue (Scheduler::awakened_local: ws awakened/yielded = runnext/ring, parasail = deque,
 * or a global queue for non-Default priorities) and only then notify() runs; a parker
 * re-checks has_ready(), which scans the global queues and then every processor's local
 * queue one after the other (WorkStealingPolicyT::has_ready / ParasailPolicyT::has_ready);
 * an idle processor steals half a victim's queue into its own (find_work_local ->
 * steal_passes -> steal_into / steal_half_into), so items MOVE between queues while a parker
 * scans; A may take the item itself, or stay busy for good (only a thief can run it).
 *
 * The program: processor 0 runs a root activity (id 0), the others start idle. A running
 * activity may, in any order, make a new activity ready (ids 1..ITEMS, each made ready once:
 * a spawn, or a wake of a blocked one), finish or block (finish()/api.cpp suspend(): pick_next
 * or the idle loop), yield (api.cpp yield(), at most YIELDS in all), or run for good (at most
 * NPROC-1 processors: a long computation that never looks at its queue again).
 *
 * Abstraction (what is NOT modelled): Promela's interleaving makes every access sequentially
 * consistent — park.hpp's seq_cst atomics and fences give that for the Dekker pairs, but the
 * rings' release/acquire and the deque's relaxed size_ hint are modelled as SC too (the
 * argument that the fences of notify() and park() make them enough is park.hpp's (a), not
 * checked here). A queue is a set of item ids with a size hint; a push, a take and a
 * steal-half are each one atomic step (their own races are models/local_queue.pml's and
 * owner_guard.pml's); a steal may fail even when the victim has items (a lost CAS, runnext's
 * grace, the owner guard held); Go's spinning rule (may_spin, relaxed heuristics) is either
 * answer at every look; no timers, inbox, stop, timeouts or spurious wake-ups (they could
 * only hide a lost wake-up); no overflow of a full ring (4096 slots); the fairness tick of
 * pick_around (it only reorders the two takes). Liveness beyond "nobody sleeps for good" (a
 * processor that keeps failing to steal) is not checked: only states where nothing can move.
 *
 * Checked: (1) no item runs twice — a take must find the item queued (assert); (2) no lost
 * wake-up — when nothing can move any more (every processor asleep in futex_wait or running
 * for good: Final's timeout), no item made ready and announced by a notify() is still in a
 * queue, the token is free and parked_ counts exactly the sleepers. -DSTRICT_YIELD (what
 * check_local_park.sh runs) includes items queued by a yield; without it they are exempt.
 * Until this model found it, yielded_local did not notify (by design, Fig. 2 "this
 * processor stays busy"; GlobalPriorityPolicy::yielded, the paper's `native`, still does
 * not). The mutant -DBUG_NO_YIELD_NOTIFY is that code, and Spin finds: P1 yields, yield()
 * takes the next activity from a queue, the idle P0 looks (pick_next, find_work, park's
 * has_ready) in the window before fin_yield pushes the yielder onto P1's ring, and sleeps;
 * the next activity runs for good and the yielder waits on P1's ring while P0 sleeps. No
 * wake-up was owed (a yield asks for no help), but no processor would come for it either;
 * yielded_local now notifies when a processor is parked (tests/native_ws/test_yield_wake.cpp
 * forces that interleaving with a hook and hangs without it).
 *
 * Mutants (Spin must find each; models/check_local_park.sh): -DBUG_NO_RECHECK: the parker's
 * re-check looks only at the global queues, not the local ones; -DBUG_NO_NOTIFY_LOCAL:
 * awakened into the own queue without notify(); -DBUG_NO_CHAIN: the idle loop does not
 * notify after it found work while more is ready (worker.cpp's chained wake-up) — needs
 * NPROC=3: two activities made ready back to back, the second notify() skipped because the
 * first one's token is in flight, the woken processor takes one and does not pass the
 * wake-up on. Activities of priority Idle (awakened_local skips notify() for them, by
 * design) are not modelled.
 */

#ifndef NPROC
#define NPROC 2
#endif
#ifndef ITEMS
#define ITEMS 2
#endif
#ifndef YIELDS
#define YIELDS 1
#endif
#ifndef SPINS
#define SPINS 1      /* kIdleSpins (1024) polls before parking, cut down */
#endif

#define GQ NPROC      /* queue index of the global queues; 0..NPROC-1: local queues */
#define NONE 255

#define NEW 0
#define QUEUED 1
#define RUNNING 2
#define DONE 3

/* park.hpp Parking::Word values */
#define RUNNING_W 0
#define PARKED 1
#define WOKEN 2

byte loc[ITEMS + 1];     /* 0: in no queue; q + 1: in queue q */
byte qn[NPROC + 1];      /* the size hints: LocalQueue::size_hint / ParasailQueue::size_hint /
                            Queue::empty of the global queues */
byte st[ITEMS + 1];      /* NEW, QUEUED, RUNNING, DONE */
bit quiet[ITEMS + 1];    /* queued by a yield (no notify) and not moved since */
byte made = 0;           /* activities made ready so far (ids 1..made) */
byte nbusy = 0;          /* processors running an activity for good */
byte yields = 0;

byte state[NPROC];       /* Parking::state_[i].v, the futex words */
byte parked = 0;         /* Parking::parked_ */
bit token = 0;           /* Parking::token_ */
bit sleeping[NPROC];     /* inside futex_wait */

/* push — one atomic publication into queue q (ring push/push_next, deque push, Queue::enqueue) */
inline push(q, id) {
    d_step {
        assert(st[id] != QUEUED);
        loc[id] = q + 1; qn[q]++; st[id] = QUEUED
    }
}

/* take — the owner's pick from queue q (LocalQueue::pick: runnext, then the ring / deque pop /
 * Queue::dequeue): some queued item (the lowest id), or got = NONE. */
inline take(q) {
    d_step {
        got = NONE; j = 0;
        do
        :: j <= ITEMS && loc[j] == q + 1 -> got = j; break
        :: j <= ITEMS && loc[j] != q + 1 -> j++
        :: j > ITEMS -> break
        od;
        if
        :: got != NONE -> assert(st[got] == QUEUED); loc[got] = 0; qn[q]--; st[got] = RUNNING
        :: else -> skip
        fi;
        j = 0
    }
}

/* steal — a thief `me` on victim v (LocalQueue::steal_into / ParasailQueue::steal_half_into):
 * ceil(n/2) of the victim's n items move in one step; all but the last go into the thief's
 * own queue (published), the last is returned to run. */
inline steal(v) {
    d_step {
        got = NONE;
        k = (qn[v] + 1) / 2;
        j = 0;
        do
        :: k > 0 && j <= ITEMS && loc[j] == v + 1 ->
            assert(st[j] == QUEUED);
            loc[j] = 0; qn[v]--; k--;
            if
            :: k == 0 -> got = j; st[j] = RUNNING
            :: else -> loc[j] = me + 1; qn[me]++; quiet[j] = 0
            fi;
            j++
        :: k > 0 && j <= ITEMS && loc[j] != v + 1 -> j++
        :: else -> break
        od;
        k = 0; j = 0
    }
}

/* has_ready — WorkStealingPolicyT::has_ready (ws_policy.hpp) / ParasailPolicyT::has_ready
 * (parasail_policy.hpp): global_.any(), then each processor's empty_hint()/size_hint() in
 * turn, one load each (items may move between the loads). `locals` = 0: the global queues
 * only (the mutant BUG_NO_RECHECK). */
inline has_ready(locals) {
    found = 0;
    atomic { if :: qn[GQ] > 0 -> found = 1 :: else -> skip fi };
    j = 0;
    do
    :: found == 0 && locals && j < NPROC ->
        atomic { if :: qn[j] > 0 -> found = 1 :: else -> skip fi; j++ }
    :: else -> break
    od;
    j = 0
}

/* notify — Scheduler::notify -> GlobalPriorityPolicy::notify -> Parking::wake_one (park.hpp),
 * after the caller published its work. wake() scans every processor's word. */
inline notify() {
    if
    :: parked == 0 -> skip                                   /* fast path */
    :: else ->
        do
        :: atomic { t = token; token = 1 };                  /* token_ exchange */
           if
           :: t == 1 -> break                                /* a wake-up is in flight */
           :: else -> skip
           fi;
           w = 0;
           i = 0;
           do                                                /* wake(kWoken) */
           :: i < NPROC ->
               atomic { if :: state[i] == PARKED -> state[i] = WOKEN; w = 1 :: else -> skip fi };
               if
               :: w == 1 -> parked--; sleeping[i] = 0; break  /* fetch_sub; futex_wake */
               :: else -> i++
               fi
           :: else -> break
           od;
           if
           :: w == 1 -> break                                /* the woken one returns the token */
           :: else ->
               token = 0;                                    /* nobody parked after all */
               if
               :: parked == 0 -> break
               :: else -> skip
               fi
           fi
        od;
        i = 0; w = 0; t = 0
    fi
}

/* park — Scheduler::suspend (dispatch.cpp: stop_spinning_local, then global_.suspend with the
 * re-check "has_ready() || more_work") -> GlobalPriorityPolicy::suspend -> Parking::park. */
inline park() {
    state[me] = PARKED;
    parked++;                                                /* fetch_add; fence */
#ifdef BUG_NO_RECHECK
    has_ready(0);
#else
    has_ready(1);
#endif
    if
    :: found -> skip
    :: else ->
        /* futex_wait(state_[me], kParked): sleeps only if the word still holds Parked */
        atomic { if :: state[me] == PARKED -> sleeping[me] = 1 :: else -> skip fi };
end_asleep:
        sleeping[me] == 0
    fi;
    found = 0;
    atomic { s = state[me]; state[me] = RUNNING_W };         /* exchange(kRunning) */
    if
    :: s == PARKED -> parked--                               /* left on its own */
    :: s == WOKEN -> token = 0                               /* chosen: returns the token */
    :: else -> skip
    fi;
    s = 0
}

/* pick_next — Scheduler::pick_next_local -> pick_around (local_policy.hpp): the own queue,
 * then the global Default queue (the fairness tick only swaps the two). */
inline pick_next() {
    take(me);
    if
    :: got == NONE -> take(GQ)
    :: else -> skip
    fi
}

active [NPROC] proctype Proc() {
    byte me = _pid;          /* processor index 0..NPROC-1 */
    byte cur = NONE, got = NONE, nxt = 0, i = 0, j = 0, k = 0, s = 0, spins = 0, v = 0;
    bit found = 0, t = 0, w = 0, may = 0;
    if
    :: me == 0 -> cur = 0; goto running     /* the root activity (id 0) runs on processor 0 */
    :: else -> goto idle
    fi;

running:   /* activity `cur` runs on processor `me` */
    do
    :: atomic { made < ITEMS -> made++; nxt = made } ->
        /* make_ready/start -> Scheduler::awakened / joiner_awakened -> awakened_local
         * (dispatch.cpp): push onto the own queue (or a global queue), then notify(). */
        if
        :: push(me, nxt)     /* Default: ws push_next (runnext) or push (ring tail); deque */
#ifdef BUG_NO_NOTIFY_LOCAL
           ; goto pushed
#endif
        :: push(GQ, nxt)     /* other priorities: global_[p].enqueue */
        fi;
        notify();
#ifdef BUG_NO_NOTIFY_LOCAL
pushed:
#endif
        nxt = 0
    :: atomic { yields < YIELDS -> yields++ } ->
        /* api.cpp yield(): pick_next(cur->priority) first; nothing: keep running. Else
         * switch_to with fin_yield (finalizers.cpp) -> Scheduler::yielded -> yielded_local
         * (dispatch.cpp): the yielder goes onto the own queue's tail, then notify() if a
         * processor is parked. The code reads parked_ relaxed, with no fence (modelled
         * here as an SC read): it may miss a processor parking at that instant, and then
         * the next yield of this processor sees it; the model checks the SC version. */
        pick_next();
        if
        :: got != NONE ->
            push(me, cur); quiet[cur] = 1;
            cur = got; got = NONE;
#ifndef BUG_NO_YIELD_NOTIFY
            if
            :: parked > 0 -> notify()
            :: else -> skip
            fi
#endif
        :: else -> skip
        fi
    :: cur != 0 || ITEMS == 0 || made > 0 ->
        /* finish() (worker.cpp) or a block (api.cpp suspend): pick_next, else the idle loop.
         * (The root first makes something ready, so that there is a program at all.) */
        st[cur] = DONE; cur = NONE;
        pick_next();
        if
        :: got != NONE -> cur = got; got = NONE
        :: else -> goto idle
        fi
    :: atomic { nbusy < NPROC - 1 -> nbusy++ } ->
        /* runs for good: never looks at its queue again */
end_busy:
        false
    od;

idle:      /* worker.cpp idle_loop */
    pick_next();
    may = 1;
    if
    :: got == NONE ->
        /* find_work_local (dispatch.cpp): Go's rule may_spin (relaxed counts: either answer);
         * then steal_passes over the other processors (local_policy.hpp). */
        if
        :: may = 0           /* *may_spin = false: park at once */
        :: i = 1;
           do
           :: i < NPROC && got == NONE ->
               v = (me + i) % NPROC;
               if
               :: steal(v)
               :: skip       /* failed: lost CAS, runnext's grace, owner guard held */
               fi;
               i++
           :: else -> break
           od;
           i = 0; v = 0
        fi
    :: else -> skip
    fi;
    if
    :: got != NONE ->
        /* found: stop_spinning; chained wake-up: if (has_ready()) notify(); switch_to */
        spins = 0;
#ifndef BUG_NO_CHAIN
        has_ready(1);
        if
        :: found -> found = 0; notify()
        :: else -> skip
        fi;
#endif
        cur = got; got = NONE; may = 0;
        goto running
    :: else -> skip
    fi;
    /* inbox, timers, stopping: not modelled */
    if
    :: may && spins < SPINS -> spins++; may = 0; goto idle      /* cpu_relax; continue */
    :: else -> skip
    fi;
    spins = 0; may = 0;
    park();
    goto idle
}

/* When nothing can move any more, no announced item may wait in a queue (a lost wake-up),
 * the token must be free (else every later notify() is skipped), and parked_ must count
 * exactly the processors asleep. */
active proctype Final() {
    byte j = 0, n = 0;
    timeout ->
    d_step {
        assert(token == 0);
        j = 0;
        do
        :: j <= ITEMS ->
#ifdef STRICT_YIELD
            assert(st[j] != QUEUED);
#else
            assert(st[j] != QUEUED || quiet[j]);
#endif
            j++
        :: else -> break
        od;
        j = 0; n = 0;
        do
        :: j < NPROC -> n = n + sleeping[j]; j++
        :: else -> break
        od;
        assert(parked == n)
    }
}
