/* local_queue.pml — a Spin model of the work-stealing ring of runtimes/native/ws/
 * local_queue.hpp (Go runtime/proc.go's runq design): the owner's push / push_next / pop /
 * runnext pick against thieves' steal-half (CAS on head) and runnext take after a grace.
 *
 * Every shared access is one Promela step (sequential consistency; the C++ code's
 * release/acquire pairs give the orders the model relies on: a slot is written before the
 * tail that publishes it, a thief reads tail before the slots it covers). A CAS is one
 * atomic step. The owner pushes items 1..ITEMS in order, nondeterministically interleaving
 * pops and runnext picks; a full ring overflows half of itself (plus the item) to the
 * global queue (Go's runqputslow, a CAS on head), which counts as taking those items.
 * Thieves make STEALS attempts each. At the end the owner drains ring and runnext.
 *
 * Checked: every item is taken exactly once — assert(taken[x] == 0) at every take (none
 * twice) and, after everyone finished, taken[x] == 1 for all x (none lost).
 * Mutants that must fail (check_local_queue.sh):
 *   BUG_POP_NO_CAS          the owner's pop stores head = h+1 instead of CAS (the last-item
 *                           race: a thief takes the same item)
 *   BUG_STEAL_NO_CAS        a thief stores head = h+n instead of CAS
 *   BUG_TAIL_BEFORE_SLOT    the owner publishes tail before writing the slot
 *   BUG_RUNNEXT_PLAIN_TAKE  a thief empties runnext with a plain store after its grace
 */

#ifndef CAP
#define CAP 2
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef THIEVES
#define THIEVES 2
#endif
#ifndef STEALS
#define STEALS 2
#endif

byte head = 0;
byte tail = 0;
byte slots[CAP];
byte runnext = 0;           /* 0 = empty */
byte taken[ITEMS + 1];
byte thieves_done = 0;

inline take(x) {
    assert(x != 0);
    assert(taken[x] == 0);  /* never twice */
    taken[x]++
}

/* owner: try to append x; full -> overflow half + x to the global queue */
inline push(x) {
    do
    :: true ->
        h = head;
        if
        :: tail - h < CAP ->
#ifdef BUG_TAIL_BEFORE_SLOT
            tail = tail + 1;
            slots[(tail - 1) % CAP] = x;
#else
            slots[tail % CAP] = x;
            tail = tail + 1;
#endif
            break
        :: else ->
            /* push_slow: CAS head past the oldest CAP/2 items, then read their slots (only
               the owner writes slots, so they still hold the taken items) */
            if
            :: atomic { head == h -> head = h + CAP / 2 } ->
                b0 = slots[h % CAP];
#if CAP > 2
                b1 = slots[(h + 1) % CAP];
#endif
                take(b0);
#if CAP > 2
                take(b1);
#endif
                take(x);      /* the new item goes to the global queue too */
                break
            :: else -> skip   /* a thief took some: retry the fast path */
            fi
        fi
    od
}

/* owner: pop the oldest ring item into r (0 = empty) */
inline pop(r) {
    do
    :: true ->
        h = head;
        if
        :: tail == h -> r = 0; break
        :: else ->
            r = slots[h % CAP];
#ifdef BUG_POP_NO_CAS
            head = h + 1;
            break
#else
            if
            :: atomic { head == h -> head = h + 1 } -> break
            :: else -> skip
            fi
#endif
        fi
    od
}

/* owner: runnext pick (an exchange with 0) */
inline pick_runnext(r) {
    atomic { r = runnext; runnext = 0 }
}

/* owner: push_next: an empty slot is filled by a plain store (only the owner fills it);
   otherwise exchange and push the displaced item to the ring */
inline push_next(x) {
    if
    :: runnext == 0 -> runnext = x
    :: else ->
        atomic { old = runnext; runnext = x };
        if
        :: old != 0 -> push(old)
        :: else -> skip
        fi
    fi
}

active proctype Owner() {
    byte next = 1, h, r, old, b0, b1, x;
    do
    :: next <= ITEMS -> push(next); next++; h = 0; old = 0; b0 = 0; b1 = 0
    :: next <= ITEMS -> push_next(next); next++; h = 0; old = 0; b0 = 0; b1 = 0
    :: true -> pop(r); if :: r != 0 -> take(r) :: else -> skip fi; h = 0; r = 0
    :: true -> pick_runnext(r); if :: r != 0 -> take(r) :: else -> skip fi; r = 0
    :: next > ITEMS -> break
    od;
    thieves_done == THIEVES;
    /* drain */
    do
    :: true -> pop(r); if :: r != 0 -> take(r) :: else -> break fi
    od;
    pick_runnext(r);
    if :: r != 0 -> take(r) :: else -> skip fi;
    /* none lost */
    x = 1;
    do
    :: x <= ITEMS -> assert(taken[x] == 1); x++
    :: else -> break
    od
}

active [THIEVES] proctype Thief() {
    byte k = 0, h, t, n, i, r, b[CAP / 2 + 1];
    do
    :: k < STEALS ->
        k++;
        do
        :: true ->
            h = head;
            t = tail;
            n = t - h;
            n = n - n / 2;
            if
            :: n == 0 ->
                /* ring empty: runnext after a grace (the grace is the gap between steps) */
                r = runnext;
                if
                :: r != 0 ->
#ifdef BUG_RUNNEXT_PLAIN_TAKE
                    runnext = 0; take(r)
#else
                    if
                    :: atomic { runnext == r -> runnext = 0 } -> take(r)
                    :: else -> skip
                    fi
#endif
                :: else -> skip
                fi;
                break
            :: n > CAP / 2 -> skip    /* inconsistent snapshot: retry */
            :: else ->
                i = 0;
                do
                :: i < n -> b[i] = slots[(h + i) % CAP]; i++
                :: else -> break
                od;
#ifdef BUG_STEAL_NO_CAS
                head = h + n;
#else
                if
                :: atomic { head == h -> head = h + n } -> skip
                :: else -> goto retry
                fi;
#endif
                i = 0;
                do
                :: i < n -> take(b[i]); i++
                :: else -> break
                od;
                break;
retry:          skip
            fi
        od;
        /* forget the attempt's locals (fewer states) */
        h = 0; t = 0; n = 0; r = 0; i = 0; b[0] = 0; b[1] = 0
    :: else -> break
    od;
    thieves_done++
}
