/* local_queue.pml — a Spin model of the work-stealing ring of coop/src/ws/
 * local_queue.hpp (Go runtime/proc.go's runq design): ring 0's owner (push / push_next /
 * pop / runnext pick) against thieves that each own a ring of their own (rings 1..THIEVES)
 * and move items with steal_into: from ring 0 or from another thief's ring, the copy into
 * the thief's ring beyond its tail, the `room` limit, the publication of the thief's tail
 * after the CAS, and the thief's own pops of its ring. The runnext take after a grace (ring
 * 0 only). An item taken to run may be pushed again (a yield: push on the taker's ring; a
 * wake on ring 0: push_next), so a slot or runnext may hold the same item a second time
 * while a stale reader still holds its first reading (runnext's ABA, slot ABA).
 *
 * The model: the owner of ring 0 pushes items 1..ITEMS in order (push or push_next),
 * nondeterministically interleaving pops and runnext picks; each thief makes STEALS
 * steal_into attempts on a victim ring it chooses (ring 0 or another thief's), interleaved
 * with pops of its own ring. A take "to run" may be followed by a re-push (at most REPUSH in
 * all, by anyone). A full ring overflows half of itself (plus the item) to the global
 * queue (Go's runqputslow, a CAS on head), which counts as taking those items. At the end
 * each thief drains its own ring, then the owner drains ring 0 and runnext.
 * With OWNER_PUSHES_ONLY the owner takes nothing before its drain (a subset of the
 * behaviours, used where more items are needed: the room limit).
 * Ring 0 has capacity CAP, the thieves' rings TCAP (<= CAP). The C++ rings all have the same
 * Capacity; the algorithm does not depend on it (room and the snapshot bound use the
 * thief's and the victim's own capacity), and a smaller thief ring reaches the `room` limit
 * with fewer items. Counters are bytes: no wrap-around at these sizes (the C++ code only
 * uses differences of its 32-bit counters).
 *
 * Abstracted away:
 * - Memory order. Every shared access is one Promela step, sequentially consistent. The C++
 *   code's release/acquire pairs give the orders the model relies on: a slot (the owner's
 *   push, or a thief's copy into its ring) is written before the tail store that publishes
 *   it (release), a consumer reads head before tail and tail before the slots it covers
 *   (acquire), a CAS on head is one atomic step that orders a taker's slot reads before the
 *   owner's later overwrite (release CAS / acquire load of head), runnext's put (release)
 *   before a thief's take (acquire). A relaxed access where the code needs acquire/release
 *   passes this model: that part is covered by the stress tests in tests/native_ws/
 *   test_ws_stress.cpp run under TSan (WsStress.RingOwnerAndThievesNoItemLostOrDuplicated,
 *   WsStress.RunnextHandOffToThieves) and the directed races in test_local_queue.cpp
 *   (LocalQueue.LastItemRaceThiefStoppedBeforeCas, LastItemRaceOwnerStoppedBeforeCas,
 *   StealRespectsThiefRoom, RunnextRaceOwnerWinsDuringGrace).
 * - The grace before a runnext take is the gap between two steps (any interleaving).
 * - The global queue (overflow) is a sink: models/local_park.pml models it and refill.
 * - Thieves' own runnext slots (a wake on a thief's processor) are not used: runnext's races
 *   are those of ring 0's; pick()'s streak bound only orders the owner's takes.
 * - The item a thief returns from steal_into is run (taken) at once; the policy's choice of
 *   victims and of when to steal is nondeterministic here (steal_into allows a non-empty
 *   thief ring, so the room limit is reachable).
 *
 * Checked: every push of an item is taken exactly once — live[x] is set by the push and
 * cleared by the take, assert(live[x] == 1) at every take (none twice: a stale take of an
 * item pushed again is caught when its second push is taken, or at the end), and after
 * everyone finished live[x] == 0 for all x (none lost).
 * Mutants that must fail (check_local_queue.sh):
 *   BUG_POP_NO_CAS          the owner's pop stores head = h+1 instead of CAS (the last-item
 *                           race: a thief takes the same item)
 *   BUG_STEAL_NO_CAS        a thief stores head = h+n instead of CAS
 *   BUG_TAIL_BEFORE_SLOT    the owner publishes tail before writing the slot
 *   BUG_RUNNEXT_PLAIN_TAKE  a thief empties runnext with a plain store after its grace
 *   BUG_THIEF_TAIL_BEFORE_COPY  steal_into reads the victim's slots into a buffer (as Go
 *                           does), and after its CAS publishes its own tail before writing
 *                           its own slots: a thief of the thief takes a stale slot
 *   BUG_STEAL_NO_ROOM       steal_into ignores `room`: the copy overwrites the thief's own
 *                           oldest items
 */

#ifndef CAP
#define CAP 4
#endif
#ifndef TCAP
#define TCAP 2
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef THIEVES
#define THIEVES 1
#endif
#ifndef STEALS
#define STEALS 2
#endif
#ifndef REPUSH
#define REPUSH 1
#endif

#define NR (THIEVES + 1)
#define CAPOF(q) ((q) == 0 -> CAP : TCAP)
/* slot of position p of ring q (each ring has CAP slots in the array, TCAP used) */
#define SL(q, p) ((q) * CAP + (p) % CAPOF(q))

byte head[NR];
byte tail[NR];
byte slots[NR * CAP];
byte runnext = 0;           /* ring 0's; 0 = empty */
bit live[ITEMS + 1];        /* pushed and not yet taken */
byte repushes = 0;
byte thieves_done = 0;

inline take(x) {
    assert(x != 0);
    assert(live[x] == 1);   /* never twice */
    live[x] = 0
}

/* the owner of ring q: append x; full -> overflow half + x to the global queue.
   Uses the caller's locals h, i, y. */
inline push(q, x) {
    live[x] = 1;
    do
    :: true ->
        h = head[q];
        if
        :: tail[q] - h < CAPOF(q) ->
#ifdef BUG_TAIL_BEFORE_SLOT
            tail[q] = tail[q] + 1;
            slots[SL(q, tail[q] - 1)] = x;
#else
            slots[SL(q, tail[q])] = x;
            tail[q] = tail[q] + 1;
#endif
            break
        :: else ->
            /* push_slow: CAS head past the oldest half, then read their slots (only the
               owner writes a ring's slots, so they still hold the taken items) */
            if
            :: atomic { head[q] == h -> head[q] = h + CAPOF(q) / 2 } ->
                i = 0;
                do
                :: i < CAPOF(q) / 2 -> y = slots[SL(q, h + i)]; take(y); i++
                :: else -> break
                od;
                take(x);      /* the new item goes to the global queue too */
                break
            :: else -> skip   /* a consumer took some: retry the fast path */
            fi
        fi
    od;
    h = 0; i = 0; y = 0
}

/* the owner of ring q: pop the oldest item into r (0 = empty). Uses h. */
inline pop(q, r) {
    do
    :: true ->
        h = head[q];
        if
        :: tail[q] == h -> r = 0; break
        :: else ->
            r = slots[SL(q, h)];
#ifdef BUG_POP_NO_CAS
            head[q] = h + 1;
            break
#else
            if
            :: atomic { head[q] == h -> head[q] = h + 1 } -> break
            :: else -> skip
            fi
#endif
        fi
    od;
    h = 0
}

/* owner of ring 0: runnext pick (an exchange with 0) */
inline pick_runnext(r) {
    atomic { r = runnext; runnext = 0 }
}

/* owner of ring 0: push_next: an empty slot is filled by a plain store (only the owner
   fills it); otherwise exchange and push the displaced item to the ring */
inline push_next(x) {
    live[x] = 1;
    if
    :: runnext == 0 -> runnext = x
    :: else ->
        atomic { old = runnext; runnext = x };
        if
        :: old != 0 -> push(0, old)
        :: else -> skip
        fi;
        old = 0
    fi
}

/* after running x on ring q's processor: maybe push it again (a yield; on ring 0 also a
   wake into runnext), at most REPUSH in all */
inline rerun(q, x) {
    if
    :: repushes < REPUSH -> repushes++; push(q, x)
    :: q == 0 && repushes < REPUSH -> repushes++; push_next(x)
    :: true -> skip    /* it finished or blocked for good */
    fi
}

active proctype Owner() {
    byte next = 1, h, r, old, i, y, x;
    do
    :: next <= ITEMS -> push(0, next); next++
    :: next <= ITEMS -> push_next(next); next++
#ifndef OWNER_PUSHES_ONLY
    :: true -> pop(0, r); if :: r != 0 -> take(r); rerun(0, r) :: else -> skip fi; r = 0
    :: true -> pick_runnext(r); if :: r != 0 -> take(r); rerun(0, r) :: else -> skip fi; r = 0
#endif
    :: next > ITEMS -> break
    od;
    thieves_done == THIEVES;
    /* drain */
    do
    :: true -> pop(0, r); if :: r != 0 -> take(r) :: else -> break fi
    od;
    pick_runnext(r);
    if :: r != 0 -> take(r) :: else -> skip fi;
    /* none lost */
    x = 1;
    do
    :: x <= ITEMS -> assert(live[x] == 0); x++
    :: else -> break
    od
}

/* thief _pid owns ring _pid (Owner is _pid 0) */
active [THIEVES] proctype Thief() {
    byte me = _pid, k = 0, v, h, t, n, i, y, r, tt, room, old;  /* old: push_next in rerun (ring 0 only, unused here) */
#ifdef BUG_THIEF_TAIL_BEFORE_COPY
    byte b[CAP / 2];
#endif
    do
    :: k < STEALS ->
        k++;
        /* choose a victim: ring 0 or another thief's */
        v = 0;
        do
        :: v + 1 < THIEVES -> v++
        :: break
        od;
        if :: v >= me -> v++ :: else -> skip fi;
        /* steal_into(victim v, thief me) */
        tt = tail[me];
        room = TCAP - (tt - head[me]);
        do
        :: true ->
            h = head[v];
            t = tail[v];
            n = t - h;
            n = n - n / 2;
            if
            :: n == 0 ->
                /* ring empty: runnext (ring 0 only) after a grace (a gap between steps) */
                if
                :: v == 0 ->
                    r = runnext;
                    if
                    :: r != 0 ->
#ifdef BUG_RUNNEXT_PLAIN_TAKE
                        runnext = 0
#else
                        if
                        :: atomic { runnext == r -> runnext = 0 } -> skip
                        :: else -> r = 0
                        fi
#endif
                    :: else -> skip
                    fi
                :: else -> skip
                fi;
                break
            :: n > CAPOF(v) / 2 -> skip    /* inconsistent snapshot: retry */
            :: else ->
#ifndef BUG_STEAL_NO_ROOM
                if
                :: n > room + 1 -> n = room + 1  /* n-1 into our ring, one returned */
                :: else -> skip
                fi;
#endif
                /* copy all but the newest into our ring beyond our tail (invisible to our
                   thieves until the tail moves) */
                i = 0;
                do
                :: i + 1 < n ->
                    y = slots[SL(v, h + i)];
#ifdef BUG_THIEF_TAIL_BEFORE_COPY
                    b[i] = y;
#else
                    /* a free position of our ring: >= our tail, < our head + TCAP (our
                       head only grows, so room read before stays a lower bound) */
                    assert(tt + i - head[me] < TCAP);
                    slots[SL(me, tt + i)] = y;
#endif
                    y = 0;
                    i++
                :: else -> break
                od;
                r = slots[SL(v, h + n - 1)];
#ifdef BUG_STEAL_NO_CAS
                head[v] = h + n;
#else
                if
                :: atomic { head[v] == h -> head[v] = h + n } -> skip
                :: else -> goto retry
                fi;
#endif
                /* publish the copied slots */
                if
                :: n > 1 -> tail[me] = tt + n - 1
                :: else -> skip
                fi;
#ifdef BUG_THIEF_TAIL_BEFORE_COPY
                i = 0;
                do
                :: i + 1 < n -> slots[SL(me, tt + i)] = b[i]; b[i] = 0; i++
                :: else -> break
                od;
#endif
                break;
retry:          r = 0
            fi
        od;
        h = 0; t = 0; n = 0; i = 0; tt = 0; room = 0; v = 0;
        if :: r != 0 -> take(r); rerun(me, r) :: else -> skip fi;
        r = 0
    :: true -> pop(me, r); if :: r != 0 -> take(r); rerun(me, r) :: else -> skip fi; r = 0
    :: k >= STEALS -> break
    od;
    /* drain our own ring */
    do
    :: true -> pop(me, r); if :: r != 0 -> take(r) :: else -> break fi
    od;
    r = 0;
    thieves_done++
}
