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
 * Mutants (each must be rejected; models/check_owner_queue.sh runs them):
 *   -DBUG_COUNT_FIRST   count before enqueueing: the owner may find no item (Theorem 3).
 *   -DBUG_EARLY_DISOWN  the paper's deq_and_is_empty used literally for units: the counter
 *                       is decremented before the operation runs, so the next owner's
 *                       operation overlaps it (unit exclusion).
 *   -DBUG_OWNER_TEST    enq_and_was_empty returns c <= 1: two owners (Theorem 2).
 *   -DBUG_NO_TOKEN      (with FUTURE) the waiter list starts unowned: a waiter becomes owner
 *                       before the value is stored and wakes itself early.
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

/* deq by the owner: Theorem 3 (an item is there) and no overlapping dequeue (Theorem 2) */
inline begin_deq(x) {
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
    q!id;
    atomic {
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

proctype Sender(byte me) {
    byte n = 0, x;
    bit was_empty, last;
    do
    :: n < ITEMS ->
        enq_and_was_empty(me * ITEMS + n, was_empty);
        if
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
        od
    };
    done == THREADS;
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
