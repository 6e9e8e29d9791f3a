/* owner_guard.pml — a Spin model of ParaSail's owner/non-owner protocol
 * (Taft 2012, "Work stealing and mostly lock-free access"; locks/owner_guard.hpp).
 *
 * One owner and NONOWNERS non-owners each make a few accesses. Flags owner_wants (ow)
 * and nonowner_wants (nw) are shared variables; Promela's interleaving semantics make
 * every access sequentially consistent, which is what OwnerGuard's seq_cst atomics give
 * (and OwnerGuardAsym's light/heavy fence pair, for the store-load pairs that matter).
 * The mutex is a holder id (0 = free) so that Check_Queue can hand it to a woken waiter;
 * the nonowner-waiting queue is a channel, used only while holding the mutex.
 *
 * Checked: (1) mutual exclusion — assert(inside == 1) in every access; (2) no non-owner
 * left waiting — every process terminates: a waiter never woken is an invalid end state
 * (Spin's deadlock check). Build with -DBUG_NO_RECHECK to drop the owner's re-check of
 * nw after clearing ow (the blog's second argument): Spin must then find a lost waiter.
 *
 * Thieves (THIEVES of them) use nonowner_try_lock, the never-waiting entry of
 * native-parasail's steal: give up on seeing ow (the hint), or when the mutex is taken, or
 * when ow is seen after setting nw — then Check_Queue without using the resource. Build
 * with -DBUG_TRY_NO_CHECK_QUEUE to give up by clearing nw and freeing the mutex instead:
 * a blocking non-owner queued meanwhile is then never woken (Spin must find it).
 *
 * owner_waiting (owt): an owner that saw nw sets it before it blocks on the mutex and clears
 * it once it holds the mutex; a thief holding the mutex that sees ow after setting nw but
 * also owt proceeds (the owner is queued behind the mutex it holds, not inside). Build with
 * -DBUG_OWAIT_EARLY to set owt before the owner's check of nw (so also on the fast path):
 * a thief may then use the resource while the owner is inside (Spin must find it).
 */

#ifndef NONOWNERS
#define NONOWNERS 2
#endif
#ifndef OWNER_ACCESSES
#define OWNER_ACCESSES 3
#endif
#ifndef THIEVES
#define THIEVES 1
#endif
#ifndef THIEF_ATTEMPTS
#define THIEF_ATTEMPTS 2
#endif
#ifndef NONOWNER_ACCESSES
#define NONOWNER_ACCESSES 2
#endif

bit ow = 0;                 /* owner-wants-resource */
bit nw = 0;                 /* nonowner-wants-resource */
bit owt = 0;                /* owner waits for the mutex (owner_lock's slow path) */
byte mutex = 0;             /* holder's id, 0 = free; id 1 = owner, 2.. = non-owners */
chan waiting = [NONOWNERS] of { byte };   /* nonowner-waiting queue (FIFO) */
bit woken[NONOWNERS + 2];
byte inside = 0;            /* threads manipulating the resource */

inline lock(me) { atomic { mutex == 0 -> mutex = me } }

inline use() {
    inside++;
    assert(inside == 1);
    inside--
}

/* Check_Queue, then unlock or hand the mutex to the woken waiter. */
inline check_queue_and_unlock(w) {
    if
    :: atomic { empty(waiting) -> nw = 0 }; mutex = 0
    :: atomic { nempty(waiting) -> waiting?w }; mutex = w; woken[w] = 1
    fi
}

active proctype Owner() {
    byte n = 0, w;
    do
    :: n < OWNER_ACCESSES ->
        ow = 1;
#ifdef BUG_OWAIT_EARLY
        owt = 1;
#endif
        if
        :: nw ->
            owt = 1;
            lock(1);
            owt = 0;
            use();
            ow = 0;
            check_queue_and_unlock(w)
        :: else ->
#ifdef BUG_OWAIT_EARLY
            owt = 0;
#endif
            use();
            ow = 0;
#ifndef BUG_NO_RECHECK
            if
            :: nw -> lock(1); check_queue_and_unlock(w)
            :: else -> skip
            fi
#endif
        fi;
        n++
    :: else -> break
    od
}

active [NONOWNERS] proctype Nonowner() {
    byte me = _pid + 1;     /* _pid is 1.. for these (Owner is 0) */
    byte n = 0, w;
    do
    :: n < NONOWNER_ACCESSES ->
        lock(me);
        nw = 1;
        do
        :: ow ->
            waiting!me;
            mutex = 0;
            woken[me] == 1;   /* sleep until woken with the mutex handed over */
            woken[me] = 0;
            assert(mutex == me)
        :: else -> break
        od;
        use();
        check_queue_and_unlock(w);
        n++
    :: else -> break
    od
}

active [THIEVES] proctype Thief() {
    byte me = _pid + 1;     /* after the owner and the non-owners */
    byte n = 0, w;
    do
    :: n < THIEF_ATTEMPTS ->
        if
        :: ow -> skip                              /* the relaxed hint: owner inside */
        :: else ->
            if
            :: atomic { mutex == 0 -> mutex = me } ->   /* try_acquire */
                nw = 1;
                if
                :: ow && owt -> use(); check_queue_and_unlock(w)   /* owner waits for our mutex */
                :: ow && !owt ->                   /* owner inside after all: give up */
#ifdef BUG_TRY_NO_CHECK_QUEUE
                    nw = 0; mutex = 0
#else
                    check_queue_and_unlock(w)
#endif
                :: else -> use(); check_queue_and_unlock(w)
                fi
            :: else -> skip                        /* mutex taken: give up */
            fi
        fi;
        n++
    :: else -> break
    od
}
