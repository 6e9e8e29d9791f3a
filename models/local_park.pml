/* local_park.pml — a Spin model of coop's park/wake protocol (coop/include/coop/park.hpp) as the
 * processor-local policies use it (native-ws, native-parasail: coop/src/scheduler.hpp
 * Scheduler<A>, worker.cpp's idle loop). The property: no processor is left parked while
 * work is queued.
 *
 * What models/park_notify.pml does not cover: work made ready on processor A goes into A's
 * OWN queue (Scheduler<A>::awakened: ws awakened/yielded = runnext/ring, parasail = deque,
 * or a global queue for non-Default priorities) and only then notify() runs; a parker
 * re-checks has_ready(), which scans the global queues and then every processor's local
 * queue one after the other (WsRingAlgorithmT::has_ready / ParasailDequeAlgorithmT::has_ready);
 * an idle processor steals half a victim's queue into its own (Scheduler<A>::find_work ->
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
 * checked here). Store->load reordering (x86-TSO) is checked by -DTSO (below), by
 * park_notify.pml -DTSO for the bare protocol, and on the hardware by test_park_tso.cpp. A
 * queue is a set of item ids with a size hint; a push, a take and a
 * steal-half are each one atomic step (their own races are models/local_queue.pml's and
 * owner_guard.pml's); a steal may fail even when the victim has items (a lost CAS, runnext's
 * grace, the owner guard held); the spinning rule (SchedulerCore::start_spinning, relaxed
 * heuristics) is either answer at every look, and a spinner's sched_yield is a step like any; no timers, inbox, stop, timeouts or spurious wake-ups (they could
 * only hide a lost wake-up); the fairness tick of pick_around (it only reorders the two
 * takes). Liveness beyond "nobody sleeps for good" (a processor that keeps failing to steal)
 * is not checked: only states where nothing can move.
 *
 * The global queue is NOT idealised (an idealised empty() once hid a lost item): it is
 * queue.hpp's list with a tail that may lag (gq/gn/glag below); empty() and any() are
 * head == tail; a take is empty() and then dequeue() (a tail on the head moved one node
 * first); a full ring (capacity CAP, 2 here: 4096 in the runtime, 256 in the policy tests)
 * overflows its oldest item and the new one as one chain in three steps (the ring's head
 * CAS, the link, the tail CAS that fails if someone moved the tail), then the append's help
 * loop (queue.hpp help_tail_to); a pick that took from the global queue refills its empty
 * ring (up to CAP/2, Go's globrunqget), each item taken and then pushed, in no queue in
 * between, and then notifies (Scheduler<A>::pick_next). Abstracted: the queue's own
 * windows inside an enqueue or a dequeue (hazard pointers, ABA, the tail read before the head
 * in empty(): tests/native_queue, test_queue_aba.cpp QueueEmpty.*); one chain append in
 * flight at a time (a second overflow waits for the first's tail CAS; two appends in flight
 * both help the tail the same way); the 3-processor sizes of check_local_park.sh take with
 * empty() and dequeue() in one step and do not refill (-DIDEAL_GLOBAL), with rings of 4 (no
 * overflow), for time: the chain's race with a take and the refill are checked at 2
 * processors, and directed by
 * tests/native_ws/test_defects_runtime.cpp (the real runtime) and test_policies.cpp
 * (WsPolicy.OverflowChainRacingAGlobalTakeHidesNothing). Sequential consistency: the
 * release/acquire of the ring and the queue are checked by the TSan builds of those tests.
 *
 * Checked: (1) no item runs twice — a take must find the item queued (assert); (2) no lost
 * wake-up — when nothing can move any more (every processor asleep in futex_wait or running
 * for good: Final's timeout), no item made ready and announced by a notify() is still in a
 * queue, the token is free and parked_ counts exactly the sleepers. -DSTRICT_YIELD (what
 * check_local_park.sh runs) includes items queued by a yield; without it they are exempt.
 * Until this model found it, Scheduler<A>::yielded did not notify (by design, Fig. 2 "this
 * processor stays busy"; GlobalQueueAlgorithm::yielded, the paper's `native`, still does
 * not). The mutant -DBUG_NO_YIELD_NOTIFY is that code, and Spin finds: P1 yields, yield()
 * takes the next activity from a queue, the idle P0 looks (pick_next, find_work, park's
 * has_ready) in the window before fin_yield pushes the yielder onto P1's ring, and sleeps;
 * the next activity runs for good and the yielder waits on P1's ring while P0 sleeps. No
 * wake-up was owed (a yield asks for no help), but no processor would come for it either;
 * Scheduler<A>::yielded now notifies when a processor is parked (tests/native_ws/test_yield_wake.cpp
 * forces that interleaving with a hook and hangs without it).
 *
 * Mutants (Spin must find each; models/check_local_park.sh): -DBUG_NO_RECHECK: the parker's
 * re-check looks only at the global queues, not the local ones; -DBUG_NO_NOTIFY_LOCAL:
 * awakened into the own queue without notify(); -DBUG_NO_CHAIN: the idle loop does not
 * notify after it found work while more is ready (worker.cpp's chained wake-up) — needs
 * NPROC=3: two activities made ready back to back, the second notify() skipped because the
 * first one's token is in flight, the woken processor takes one and does not pass the
 * wake-up on; -DBUG_CHAIN_LAG: the chain append returns after a failed tail CAS without
 * helping the tail to its end (Spin: P1's take passes empty() while two items are queued;
 * P0 takes both (a pick and its refill), its ring of 2 overflows as a chain, P1's dequeue
 * moves the tail onto the chain's first item and takes it, P0's tail CAS fails: head == tail
 * with the second item behind it; P1 runs for good, P0's looks all say "empty", it sleeps); -DBUG_NO_REFILL_NOTIFY: a pick that refilled does not notify (the
 * global queue holds two items, P0's pick from a finish takes one and refills the other; P1
 * looks in between and parks; P0 runs the first for good). Activities of priority Idle (Scheduler<A>::awakened skips notify() for them, by
 * design) are not modelled.
 *
 * -DTSO: x86-TSO instead of sequential consistency (Sewell et al., "x86-TSO: a rigorous and
 * usable programmer's model for x86 multiprocessors", CACM 2010, Sect. 3; the usual Promela
 * encoding, as in park_notify.pml): each processor's stores go through a FIFO store buffer
 * that a process of its own (Drain) empties into memory at any moment; a fence or a locked
 * instruction of that processor waits until it is empty; the processor's own loads read it
 * first. Which stores are buffered: a push onto the own ring/deque that is NOT followed by a
 * locked instruction or fence before the processor's next load of shared memory — awakened's
 * and the yield's push (LocalQueue::push / push_next: a relaxed slot store and a release
 * store of tail_ or runnext_, plain movs; the deque's push likewise). Every other store of
 * the model is a seq_cst store (xchg), a locked RMW (CAS, fetch_add, exchange: the global
 * queue, steals, park.hpp's words and counts) or is followed by one before any load of
 * another location (the refill's pushes: the next gtake's CAS or notify()'s fence; the
 * overflow's and a steal's pushes, after their CAS): in TSO such a store is indistinguishable
 * from one made at that instruction, so it is modelled as a plain assignment there. The
 * fences and locked instructions that wait for the buffer (DRAINED): notify()'s leading
 * fence (wake_one), the yield's fence before its look at parked_, park()'s Parked store and
 * fetch_add, the owner's pick (ws: the head CAS / runnext exchange), every global-queue and
 * steal CAS. The processor's own later reads of its queue come after one of these, so the
 * buffer's forwarding to them is not modelled. Under TSO:
 *   -DBUG_YIELD_NO_FENCE   Scheduler<A>::yielded without the seq_cst fence between its push
 *                          and its look at parked_ (coop before the fix): Spin must find the
 *                          lost wake-up (P1 yields: its push sits in the buffer while it reads
 *                          parked_ == 0; P0 finds nothing, parks and sleeps; P1 runs the next
 *                          activity for good; the buffer drains behind a sleeping P0). Without
 *                          -DTSO the same mutant passes: why the SC model could not see it.
 *   -DBUG_WAKER_NO_FENCE   wake_one() without its leading fence (the waker's half of the
 *                          Dekker pair): awakened's push passes the look at parked_ the same way.
 * Still abstracted away under -DTSO: a store buffer of one entry (a second push waits for the
 * first to drain: every path here fences or locks between two pushes in the fixed code, so
 * this hides nothing that code can do, but a mutant that removes two fences at once would be
 * checked with fewer reorderings); parasail's owner pop_back is plain (OwnerGuardAsym, no
 * locked instruction) and reads its own buffered push by forwarding, modelled as a drain
 * first (the same value either way; the thieves' side is the membarrier heavy fence, not
 * modelled); ARM/POWER's weaker orders (load->load, store->store, non-multi-copy-atomic
 * stores): there coop's C++ orders hold, and TSan (test_park_tso, ParkNotify, the ws tests
 * under the tsan preset) checks their happens-before, not reorderings; the real store-buffer
 * window is test_park_tso.cpp's (two pinned threads on the real Scheduler<A>, a yield and an
 * awakened waker). The timers: their publication (TimerEntry push: CAS; earliest_ns: CAS-min)
 * is locked, so TSO adds no reordering to them; their re-check is park_notify.pml -DTIMER's.
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
#ifndef CAP
#define CAP 2        /* the ring's capacity (4096 in the runtime): 2 lets three activities overflow */
#endif
#ifndef SPINS
#define SPINS 1      /* polls before parking (kIdleSpinNs of them in the runtime), cut down */
#endif

#define GQ NPROC      /* queue index of the global queues; 0..NPROC-1: local queues */
#define NONE 255

#define NEW 0
#define QUEUED 1
#define RUNNING 2
#define DONE 3
#define MOVING 4          /* taken from one queue, not yet in another (overflow, refill) */

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

/* The global queue (queue.hpp, Michael and Scott's list with a dummy), not idealised: gq[0..gn-1]
 * are the linked items in order (gq[0] the dummy's successor); glag counts the linked nodes
 * beyond tail_ (0: the tail on the last node). empty() is head_ == tail_, i.e. the tail on the
 * dummy: glag == gn, whatever is linked behind it. A single enqueue is one step (link and tail
 * swing; it helps a lagging tail all the way first, as append's loop does); an overflow chain
 * is three steps (take from the ring, link, tail CAS) and a take two (empty(), dequeue). */
byte gq[ITEMS + 1];
byte gn = 0;
byte glag = 0;
bit chain_busy = 0;      /* one chain append in flight at a time (see the header) */
/* The summary word's bit of the global queue (local_algorithm.hpp GlobalQueues::nonempty_):
 * set by every enqueue after it links, cleared by a take that found the queue empty, which
 * then looks again and sets it if the queue is not empty. `owe`: enqueues and takes between
 * their link / clear and their bit-set / re-check (they will set it if it matters). The
 * monitor `summary` asserts the invariant: never a clear bit over a non-empty queue (as
 * empty() sees it) with nobody owing a look. -DBUG_SUMMARY_NO_RECHECK: a take clears the bit
 * and does not look again. */
bit gbit = 0;
byte owe = 0;
bit chain_moved = 0;     /* the tail moved since the chain's link (its tail CAS fails) */

byte state[NPROC];       /* Parking::state_[i].v, the futex words */
byte parked = 0;         /* Parking::parked_ */
bit token = 0;           /* Parking::token_ */
bit sleeping[NPROC];     /* inside futex_wait */

#ifdef TSO
/* sb[p]: processor p's store buffer, one pending push onto its own queue (item id + 1; 0:
 * empty). The item is QUEUED but in no queue other processors can see (loc 0) until Drain. */
byte sb[NPROC];
#define DRAINED(p) (sb[p] == 0)
#else
#define DRAINED(p) true
#endif

/* push — one atomic publication into a local queue q (ring push/push_next, deque push) */
inline push(q, id) {
    d_step {
        assert(st[id] != QUEUED);
        loc[id] = q + 1; qn[q]++; st[id] = QUEUED
    }
}

/* gpush — Queue::enqueue(item) on the global queue: helps a lagging tail to the end, links,
 * swings the tail (one step: its own windows are queue.hpp's tests'). */
inline gpush(id) {
    d_step {
        DRAINED(me);                             /* the enqueue's CAS */
        assert(st[id] != QUEUED);
        if :: glag > 0 -> chain_moved = 1 :: else -> skip fi;
        gq[gn] = id; gn++; glag = 0;
        loc[id] = GQ + 1; qn[GQ]++; st[id] = QUEUED;
        owe++
    }
    atomic { gbit = 1; owe-- }                  /* GlobalQueues::push: fetch_or after the enqueue */
}

/* gclear — GlobalQueues::take found nothing: clears the bit (fetch_and), then looks at the
 * queue again (empty()) and sets the bit if it is not empty (fetch_or; the look and the set
 * in one step here: a take that clears meanwhile owes its own look). */
inline gclear() {
#ifdef BUG_SUMMARY_NO_RECHECK
    gbit = 0
#else
    atomic { gbit = 0; owe++ };
    atomic { if :: glag < gn -> gbit = 1 :: else -> skip fi; owe-- }
#endif
}

/* gdeq — the body of Queue::dequeue() on the global queue: a tail on the head is moved one
 * node first (Fig. 6 line 35), then the head; got = NONE if nothing is linked. */
inline gdeq() {
    if
    :: gn > 0 ->
        if :: glag == gn -> glag--; chain_moved = 1 :: else -> skip fi;
        got = gq[0];
        j = 0;
        do
        :: j + 1 < gn -> gq[j] = gq[j + 1]; j++
        :: else -> break
        od;
        gn--; gq[gn] = 0; j = 0;
        assert(st[got] == QUEUED); loc[got] = 0; qn[GQ]--; st[got] = RUNNING
    :: else -> skip
    fi
}

/* gtake — GlobalQueues::take: empty() (head_ == tail_), then, in a later step, dequeue(); got
 * = NONE if empty() said so or the queue was empty by then. -DIDEAL_GLOBAL (the 3-processor
 * sizes, for time): both in one step and no refill, which leaves out the race of a take that
 * passed empty() with an overflow chain's append, and refill's window (both checked at the
 * 2-processor sizes). */
inline gtake() {
    got = NONE;
#ifdef IDEAL_GLOBAL
    d_step { if :: gbit == 1 && glag < gn -> gdeq() :: gbit == 1 && glag >= gn -> gbit = 0 :: else -> skip fi }
#else
    if
    :: atomic { gbit == 0 -> skip }             /* the summary bit is clear: nothing */
    :: atomic { gbit == 1 && glag < gn -> skip } ->   /* bit set, empty() said "not empty" */
        d_step { gdeq() };
        if :: got == NONE -> gclear() :: else -> skip fi
    :: atomic { gbit == 1 && glag >= gn -> skip } ->  /* bit set, empty() said "empty" */
        gclear()
    fi
#endif
}

/* lpush — push onto the own ring (capacity CAP); a full ring overflows (LocalQueue::push_slow,
 * WsRingAlgorithmT::overflow): its oldest CAP/2 (one here: CAP is 2) and the new item go
 * to the global queue as ONE chain: taken from the ring by its head CAS (step 1: in no queue
 * now), linked behind the global tail in one CAS (step 2), then the tail CAS (step 3), which
 * fails if another processor moved the tail meanwhile; the fixed append then helps the tail
 * on to the chain's end, one node per step (queue.hpp help_tail_to). */
inline lpush(id) {
#ifdef TSO
    DRAINED(me);                                 /* a store buffer of one entry (header) */
#endif
    if
#ifdef TSO
    :: atomic { qn[me] < CAP ->                  /* the push's stores: into the buffer */
           assert(st[id] != QUEUED); st[id] = QUEUED; sb[me] = id + 1 }
#else
    :: atomic { qn[me] < CAP -> push(me, id) }
#endif
    :: else ->
        d_step {                                 /* step 1: the ring's head CAS */
            DRAINED(me);
            c1 = NONE; j = 0;
            do
            :: j <= ITEMS && loc[j] == me + 1 -> c1 = j; break
            :: j <= ITEMS && loc[j] != me + 1 -> j++
            :: j > ITEMS -> break
            od;
            j = 0;
            if
            :: c1 != NONE -> loc[c1] = 0; qn[me]--; st[c1] = MOVING
            :: else -> skip
            fi
        }
        if
        :: c1 == NONE -> push(me, id)            /* a thief emptied it meanwhile */
        :: else ->
            d_step {                             /* step 2: link the chain c1, id */
                chain_busy == 0 -> chain_busy = 1;
                if :: glag > 0 -> chain_moved = 1 :: else -> skip fi;
                glag = 0;                        /* append's link loop helps first */
                gq[gn] = c1; gq[gn + 1] = id; gn = gn + 2; glag = 2;
                chain_moved = 0; owe++;
                loc[c1] = GQ + 1; loc[id] = GQ + 1; qn[GQ] = qn[GQ] + 2;
                st[c1] = QUEUED; st[id] = QUEUED
            }
            atomic {                             /* step 3: the tail CAS */
                if :: chain_moved == 0 -> glag = 0 :: else -> skip fi
            }
#ifndef BUG_CHAIN_LAG
            do                                   /* help_tail_to, one node per round */
            :: atomic { glag > 0 -> glag-- }
            :: atomic { glag == 0 -> break }
            od;
#endif
            atomic { gbit = 1; owe-- };          /* GlobalQueues::push(chain): the bit after the append */
            chain_busy = 0; c1 = NONE
        fi
    fi
}

/* take — the owner's pick from queue q (LocalQueue::pick: runnext, then the ring / deque pop /
 * Queue::dequeue): some queued item (the lowest id), or got = NONE. */
inline take(q) {
    d_step {
        DRAINED(me);                             /* the pick's head CAS / runnext exchange */
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
        DRAINED(me);                             /* the steal's CAS on the victim */
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

/* has_ready — WsRingAlgorithmT::has_ready (ws_ring.hpp) / ParasailDequeAlgorithmT::has_ready
 * (parasail_deque.hpp): global_.any(), then each processor's empty_hint()/size_hint() in
 * turn, one load each (items may move between the loads). `locals` = 0: the global queues
 * only (the mutant BUG_NO_RECHECK). */
inline has_ready(locals) {
    found = 0;
    atomic { if :: glag < gn -> found = 1 :: else -> skip fi };   /* any(): !empty() */
    j = 0;
    do
    :: found == 0 && locals && j < NPROC ->
        atomic { if :: qn[j] > 0 -> found = 1 :: else -> skip fi; j++ }
    :: else -> break
    od;
    j = 0
}

/* notify — SchedulerCore::notify -> Parking::wake_one (park.hpp),
 * after the caller published its work. wake() scans every processor's word. */
inline notify() {
#if defined(TSO) && !defined(BUG_WAKER_NO_FENCE)
    DRAINED(me);                                             /* wake_one's seq_cst fence */
#endif
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

/* park — Scheduler<A>::suspend (scheduler.hpp: after the idle loop's stop_spinning, with the
 * re-check "has_ready() || more_work") -> SchedulerCore::park -> Parking::park. */
inline park() {
#ifdef TSO
    DRAINED(me);                                             /* Parked: a seq_cst store (xchg) */
#endif
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

/* pick_next — Scheduler<A>::pick_next -> pick_around (local_algorithm.hpp): the own queue,
 * then the global Default queue (the fairness tick only swaps the two); after a take from the
 * global queue, WsRingAlgorithmT::refill moves more of it into the (empty) own ring, each
 * taken (gtake) and then pushed (in no queue in between), and Scheduler<A>::pick_next notifies when
 * it moved any. */
inline pick_next() {
    take(me);
    if
    :: got == NONE ->
        gtake();
        if
#ifndef IDEAL_GLOBAL
        :: got != NONE ->
            atomic { h = got; moved = 0 }
            do
            :: moved < CAP / 2 ->                /* kGlobalBatch: at most half the ring */
                gtake();                         /* taken: in no queue until the push */
                if
                :: got == NONE -> break
                :: else ->
                    d_step {                     /* LocalQueue::try_push */
                        st[got] = MOVING;
                        assert(st[got] != QUEUED);
                        loc[got] = me + 1; qn[me]++; st[got] = QUEUED;
                        got = NONE; moved++
                    }
                fi
            :: moved > 0 -> break                /* a shorter batch (the global queue ran dry) */
            od;
            atomic { got = h; h = 0 }
#ifndef BUG_NO_REFILL_NOTIFY
            if :: moved > 0 -> notify() :: else -> skip fi;
#endif
            moved = 0
#endif
        :: else -> skip
        fi
    :: else -> skip
    fi
}

active [NPROC] proctype Proc() {
    byte me = _pid;          /* processor index 0..NPROC-1 */
    byte cur = NONE, got = NONE, nxt = 0, i = 0, j = 0, k = 0, s = 0, spins = 0, v = 0;
    byte h = 0, moved = 0, c1 = NONE;
    bit found = 0, t = 0, w = 0, may = 0;
    if
    :: me == 0 -> cur = 0; goto running     /* the root activity (id 0) runs on processor 0 */
    :: else -> goto idle
    fi;

running:   /* activity `cur` runs on processor `me` */
    do
    :: atomic { made < ITEMS -> made++; nxt = made } ->
        /* make_ready/start -> Scheduler<A>::awakened (next=false for a joiner)
         * (Scheduler<A>::awakened): push onto the own queue (or a global queue), then notify(). */
        if
        :: lpush(nxt)        /* Default: ws push_next (runnext) or push (ring tail); deque */
#ifdef BUG_NO_NOTIFY_LOCAL
           ; goto pushed
#endif
        :: gpush(nxt)        /* other priorities: global_[p].enqueue */
        fi;
        notify();
#ifdef BUG_NO_NOTIFY_LOCAL
pushed:
#endif
        nxt = 0
    :: atomic { yields < YIELDS -> yields++ } ->
        /* api.cpp yield(): pick_next(cur->priority) first; nothing: keep running. Else
         * switch_to with fin_yield (finalizers.cpp) -> Scheduler<A>::yielded
         * (Scheduler<A>::yielded): the yielder goes onto the own queue's tail, then notify() if a
         * processor is parked. The code fences after the push, then reads parked_.
         * (Without the fence x86 lets the read pass the push and a parker sleeps beside
         * the queued yielder: -DTSO -DBUG_YIELD_NO_FENCE, test_park_tso.cpp.) */
        pick_next();
        if
        :: got != NONE ->
            lpush(cur); quiet[cur] = 1;
            cur = got; got = NONE;
#ifndef BUG_NO_YIELD_NOTIFY
#if defined(TSO) && !defined(BUG_YIELD_NO_FENCE)
            DRAINED(me);                         /* the yield's seq_cst fence */
#endif
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
        /* worker.cpp idle_loop: SchedulerCore::start_spinning, Go's rule with the running
         * processors capped by the usable CPUs (relaxed counts: either answer); granted:
         * find_work, steal_passes over the other processors (local_algorithm.hpp). A processor
         * refused while has_ready() sees work makes one steal attempt and goes back to the
         * loop's top (sched_yield; continue) instead of parking: the same steps as a
         * granted spinner's poll below (steal, then back to idle), repeated; it parks on no
         * other path, so for the safety property checked here (no announced item left
         * while everyone sleeps) the granted branch covers it. */
        if
        :: may = 0           /* refused: park at once */
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

#ifdef TSO
/* Drain — processor _pid - NPROC's store buffer reaches memory at any moment: the pushed item
 * becomes visible in that processor's queue. */
active [NPROC] proctype Drain() {
    byte p = _pid - NPROC;
end_drain:
    do
    :: d_step { sb[p] != 0 -> loc[sb[p] - 1] = p + 1; qn[p]++; sb[p] = 0 }
    od
}
#endif

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

/* summary — the summary word's invariant (see gbit): a clear bit over a queue that empty()
 * calls non-empty, with no enqueue or take owing a look, would hide the queue from every pick
 * until the next enqueue. */
active proctype summary() {
end_summary:
    atomic { (glag < gn && gbit == 0 && owe == 0) -> assert(false) }
}
