/* owner_queue.pml — a Spin model of Quirk's OwnerQueue (units/owner_queue.hpp; Quirk 2008,
 * sections 6-8) as units use it.
 *
 * The underlying lock-free queue is linearizable (queue.hpp), so it is one channel whose
 * send/receive are atomic; the counter's fetch_and_increment / decrement_and_fetch are
 * atomic steps of their own. enq_and_was_empty is the two steps "enqueue; c = count++"
 * with every interleaving in between, as in section 7. Promela's interleaving is
 * sequentially consistent; the C++ acq_rel orders of the implementation give the same
 * happens-before for these two-step operations (see the comments in owner_queue.hpp).
 *
 * Default model (units): THREADS threads each send ITEMS messages to one unit: enqueue,
 * and if enq_and_was_empty returned true, become the owner and drain: begin_deq (take an
 * item), run it, end_deq_and_is_empty (count it out), until empty. Checked:
 *   Theorem 2 — never two owners (owners <= 1), no overlapping dequeues (in_deq <= 1);
 *   Theorem 3 — a dequeue by the owner always finds an item (assert before the receive);
 *   unit exclusion — never two operations of the unit at once (running <= 1);
 *   every item dequeued exactly once, and at the end the queue and counter are empty and
 *   nobody owns the queue (checked by the final monitor; an item stuck forever would also
 *   show as a counter != 0 there: no lost wake-up of the unit).
 *
 * -DFUTURE: the waiter list of a future (units.hpp): the counter starts at 1 (the
 * producer's token), a resolver sets `resolved`, gives the token back and drains the
 * waiters counted meanwhile; WAITERS waiters each either see `resolved` and go on, or enter
 * the list and, if that made them owner, drain it. Checked: Theorem 2 and 3 as above, every
 * waiter woken exactly once, and only after the value was stored.
 *
 * -DLIFETIME: the unit's lifetime, with the hand-off to carriers (units.hpp). THREADS senders
 * each send ITEMS messages to one unit; a sender that becomes owner hands the unit over
 * through the ready channel (the ready queue) to one of CARRIERS carriers, which drains it:
 * begin_deq, the operation, end_deq_and_is_empty, and then publishes the message's result
 * (`results++`). Main is the program: once every send returned (it holds the futures only
 * then) and it has seen every result, it destroys the unit (`freed = 1`). Every access to
 * the unit (its queue, its counter, the hand-off) asserts freed == 0. Checked besides
 * Theorems 2, 3 and unit exclusion: nobody touches the unit after the program has seen its
 * last result, and the unit is on the ready channel at most once.
 *
 * What the models abstract away, and which test covers it instead:
 * - Memory orders: Promela is sequentially consistent, so a relaxed load where the code
 *   needs acquire would pass here. The C++ orders are argued in comments (owner_queue.hpp,
 *   units.hpp) and exercised by tests/units under TSan.
 * - The underlying queue is one atomic channel (its own lock-free steps and hazard pointers
 *   are covered by tests/native_queue and models of runtimes/native).
 * - One future per message, one registration per waiter (FUTURE); the value and the
 *   waiters' own lifetimes are not modelled; the program destroying a unit right after the
 *   last result is tests/units/test_units_lifetime (directed: DestroyUnitAfterLastResult.*).
 * - Scope::stop() and senders outside carriers (the g_outside/g_stopping Dekker pair):
 *   tests/units/test_units_lifetime (SendInProgressWhenStopBeginsCompletesAndRuns,
 *   SendWhileScopeStopsAborts).
 *
 * Mutants (each must be rejected; models/check_owner_queue.sh runs them):
 *   -DBUG_COUNT_FIRST   count before enqueueing: the owner may find no item (Theorem 3).
 *   -DBUG_EARLY_DISOWN  the paper's deq_and_is_empty used literally for units: the counter
 *                       is decremented before the operation runs, so the next owner's
 *                       operation overlaps it (unit exclusion).
 *   -DBUG_OWNER_TEST    enq_and_was_empty returns c <= 1: two owners (Theorem 2).
 *   -DBUG_NO_TOKEN      (with FUTURE) the waiter list starts unowned: a waiter becomes owner
 *                       before the value is stored and wakes itself early.
 *   -DBUG_RESOLVE_BEFORE_END (with LIFETIME) the result is published inside the operation,
 *                       before end_deq_and_is_empty: the program destroys the unit and the
 *                       carrier's end_deq writes into it (freed == 0 violated).
 */

#ifndef THREADS
#define THREADS 3
#endif
#ifndef ITEMS
#define ITEMS 2
#endif
#ifndef WAITERS
#define WAITERS 3
#endif
#ifndef CARRIERS
#define CARRIERS 2
#endif

#define NITEMS (THREADS * ITEMS)

#ifdef FUTURE
#define QSIZE WAITERS
#else
#define QSIZE NITEMS
#endif

chan q = [QSIZE] of { byte };
int count = 0;
byte owners = 0;
byte in_deq = 0;
byte running = 0;
byte done = 0;
byte dequeued[QSIZE];
bit freed = 0;          /* LIFETIME: the program destroyed the unit */
byte results = 0;       /* LIFETIME: results published */

/* alive: an access to the unit (LIFETIME: it must not have been destroyed) */
#ifdef LIFETIME
#define alive() assert(freed == 0)
#else
#define alive() skip
#endif

/* deq by the owner: Theorem 3 (an item is there) and no overlapping dequeue (Theorem 2) */
inline begin_deq(x) {
    alive();
    in_deq++;
    assert(in_deq == 1);
    atomic { assert(nempty(q)); q?x };
    dequeued[x]++;
    assert(dequeued[x] == 1);
    in_deq--
}

/* c = count--; ownership ends when c == 1 */
inline end_deq(last) {
    atomic {
        alive();
        last = (count == 1);
        count--;
        if
        :: last -> owners--
        :: else -> skip
        fi
    }
}

#ifndef FUTURE

inline enq_and_was_empty(id, was_empty) {
#ifdef BUG_COUNT_FIRST
    atomic {
        was_empty = (count == 0);
        count++;
        if
        :: was_empty -> owners++; assert(owners == 1)
        :: else -> skip
        fi
    };
    q!id
#else
    atomic { alive(); q!id };
    atomic {
        alive();
#ifdef BUG_OWNER_TEST
        was_empty = (count <= 1);
#else
        was_empty = (count == 0);
#endif
        count++;
        if
        :: was_empty -> owners++; assert(owners == 1)
        :: else -> skip
        fi
    }
#endif
}

#ifdef LIFETIME
chan ready = [1] of { byte };   /* the ready queue; the unit is on it at most once */

/* Carrier: takes the unit from the ready queue and drains it; a message's result is
 * published after the unit was counted out (units.hpp UnitBase::drain). */
proctype Carrier() {
    byte u, x;
    bit last;
end:
    do
    :: ready?u ->
        do
        :: true ->
            begin_deq(x);
            running++; assert(running == 1);
#ifdef BUG_RESOLVE_BEFORE_END
            results++;          /* the result visible inside the operation */
#endif
            running--;
            end_deq(last);
#ifndef BUG_RESOLVE_BEFORE_END
            results++;          /* publish: after the carrier's last access to the unit */
#endif
            if
            :: last -> break
            :: else -> skip
            fi
        od
    od
}

/* Main: the program; destroys the unit once every send returned and every result is seen. */
proctype Main() {
    (done == THREADS && results == NITEMS) -> freed = 1
}
#endif

proctype Sender(byte me) {
    byte n = 0, x;
    bit was_empty, last;
    do
    :: n < ITEMS ->
        enq_and_was_empty(me * ITEMS + n, was_empty);
        if
#ifdef LIFETIME
        :: was_empty ->
            atomic { alive(); assert(empty(ready)); ready!0 }    /* hand-off to a carrier */
#else
        :: was_empty ->
            do
            :: true ->
                begin_deq(x);
#ifdef BUG_EARLY_DISOWN
                end_deq(last);
                running++; assert(running == 1); running--;
#else
                running++; assert(running == 1); running--;
                end_deq(last);
#endif
                if
                :: last -> break
                :: else -> skip
                fi
            od
#endif
        :: else -> skip
        fi;
        n++
    :: else -> break
    od;
    done++
}

init {
    byte i;
    atomic {
        i = 0;
        do
        :: i < THREADS -> run Sender(i); i++
        :: else -> break
        od;
#ifdef LIFETIME
        run Main();
        i = 0;
        do
        :: i < CARRIERS -> run Carrier(); i++
        :: else -> break
        od
#endif
    };
    done == THREADS;
#ifdef LIFETIME
    freed == 1;             /* every result was seen (a lost unit would block here) */
    assert(results == NITEMS);
#endif
    assert(empty(q));
    assert(count == 0);
    assert(owners == 0);
    i = 0;
    do
    :: i < NITEMS -> assert(dequeued[i] == 1); i++
    :: else -> break
    od
}

#else /* FUTURE */

bit resolved = 0;
byte woken[WAITERS];

/* wake: a waiter may only be woken after the value was stored, and only once */
inline wake(x) {
    assert(resolved == 1);
    woken[x]++;
    assert(woken[x] == 1)
}

inline drain() {
    do
    :: true ->
        begin_deq(x);
        end_deq(last);
        wake(x);
        if
        :: last -> break
        :: else -> skip
        fi
    od
}

proctype Resolver() {
    byte x;
    bit last;
    resolved = 1;
#ifndef BUG_NO_TOKEN
    end_deq(last);              /* disown_token_and_is_empty */
    if
    :: !last -> drain()
    :: else -> skip
    fi;
#endif
    done++
}

proctype Waiter(byte me) {
    byte x;
    bit was_empty, last;
    if
    :: resolved -> woken[me]++      /* ready(): no registration needed */
    :: else ->
        q!me;
        atomic {
            was_empty = (count == 0);
            count++;
            if
            :: was_empty -> owners++; assert(owners == 1)
            :: else -> skip
            fi
        };
        if
        :: was_empty -> drain()
        :: else -> skip
        fi
    fi;
    done++
}

init {
    byte i;
    atomic {
#ifndef BUG_NO_TOKEN
        count = 1;              /* OwnerQueue(owned): the resolver holds the token */
        owners = 1;
#endif
        run Resolver();
        i = 0;
        do
        :: i < WAITERS -> run Waiter(i); i++
        :: else -> break
        od
    };
    done == WAITERS + 1;
    assert(empty(q));
    assert(count == 0);
    assert(owners == 0);
    i = 0;
    do
    :: i < WAITERS -> assert(woken[i] == 1); i++
    :: else -> break
    od
}

#endif
