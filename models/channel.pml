/* channel.pml — a Spin model of coop::Channel's park / hand-off / close protocol
 * (coop/include/coop/channel.hpp; after Go's runtime/chan.go: a send to a parked receiver
 * moves the value into it and makes it ready; a parking goroutine's lock is released only
 * after it is switched out, gopark's unlockf).
 *
 * The program: NS = 2 senders each send one value (sender i: i + 1); NR = 2 receivers each
 * receive until the channel reports closed; a closer closes the channel at any time (before,
 * among or after the sends). The capacity is 0 (a rendezvous) or 1, chosen at the start:
 * Spin explores both.
 *
 * Modelled as in the code: one lock (the spin lock; an atomic test-and-set step) guards the
 * buffer (one slot: capacity <= 1), the FIFO lists of parked senders and receivers and the
 * closed flag. Parking: enqueue under the lock, release the lock, be switched out
 * (`switched`), then the suspend's finalizer CASes the waiter's `state` WAITING -> PARKED
 * and, if the CAS fails (a waker came first), makes the waiter ready itself; the waiter
 * resumes once made ready (`ready`) and reads its `state` (DONE / CLOSED) and, a receiver,
 * its result slot. Waking: the waker owns the dequeued waiter: it moves the value, exchanges
 * the outcome into `state` and makes the waiter ready only if it read PARKED; make_ready
 * asserts that the waiter is switched out (no wake-up of an activity that still runs) and
 * not made ready twice.
 * Abstracted: the scheduler (make_ready is a flag; the woken process runs at any later
 * time), memory orders (Promela is sequentially consistent; the code's acquire/release pairs
 * are the lock's and wake()'s state store, commented there and run under TSan).
 *
 * Checked: (1) no value lost or duplicated: at the end every value was received exactly once
 * or its send threw (closed), never both; (2) no lost wake-up and close wakes everyone: every
 * process terminates (pan reports an invalid end state otherwise); (3) no early wake-up
 * (assert in make_ready); (4) a receiver that is told DONE holds a value.
 *
 * Mutants (check_channel.sh: each must fail):
 *   BUG_WAKE_UNCONDITIONAL    a waker makes the waiter ready whatever state it read (also
 *                             while the waiter is still switching out)
 *   BUG_FINALIZER_NO_WAKE     the parking finalizer ignores a failed CAS (a waker that came
 *                             before the switch left the wake-up to it)
 *   BUG_WAKE_BEFORE_COPY      send publishes DONE and wakes the receiver before moving the value
 *   BUG_CLOSE_FLAG_LATE       close sets `closed` in a second critical section, after detaching
 *   BUG_RECV_NO_REFILL        recv from a full buffer with a parked sender does not move the
 *                             sender's value into the freed slot
 */

#define NS 2
#define NR 2
#define WAITING 0
#define DONE 1
#define CLOSED 2
#define PARKED 3

byte cap;                /* 0 or 1 */
bit lk;                  /* the channel's lock */
bit closed;
byte buf;                /* the one slot's value (0: none) */
byte count;              /* values buffered */
byte sq[NS]; byte sqn;   /* parked senders, oldest first */
byte rq[NR]; byte rqn;   /* parked receivers, oldest first */
byte sval[NS];           /* a parked sender's value */
byte rout[NR];           /* a parked receiver's result slot (0: none) */
byte sstate[NS]; byte rstate[NR];
bit sswitched[NS]; bit rswitched[NR];  /* switched out (parked), may be made ready */
bit sready[NS]; bit rready[NR];        /* made ready */
byte delivered[NS + 1];  /* per value: times received */
bit sclosed[NS];         /* sender i's send threw ChannelClosed */
byte senders_done;

inline lock() { atomic { lk == 0 -> lk = 1 } }
inline unlock() { lk = 0 }

/* the two FIFO lists (at most two waiters each) */
inline pop_r(w) { d_step { w = rq[0]; rq[0] = rq[1]; rq[1] = 0; rqn-- } }
inline pop_s(w) { d_step { w = sq[0]; sq[0] = sq[1]; sq[1] = 0; sqn-- } }
inline push_r(w) { d_step { rq[rqn] = w; rqn++ } }
inline push_s(w) { d_step { sq[sqn] = w; sqn++ } }
inline ready_sender(i) {
    assert(sswitched[i] == 1);  /* never make ready an activity that still runs */
    assert(sready[i] == 0);     /* nor twice */
    sready[i] = 1
}
inline ready_receiver(j) {
    assert(rswitched[j] == 1);
    assert(rready[j] == 0);
    rready[j] = 1
}

/* wake: the waker's exchange of the outcome; it makes the waiter ready iff it read PARKED */
inline wake_sender(i, how) {
    atomic { old = sstate[i]; sstate[i] = how };
#ifdef BUG_WAKE_UNCONDITIONAL
    ready_sender(i)
#else
    if
    :: old == PARKED -> ready_sender(i)
    :: else
    fi
#endif
}
inline wake_receiver(j, how) {
    atomic { old = rstate[j]; rstate[j] = how };
#ifdef BUG_WAKE_UNCONDITIONAL
    ready_receiver(j)
#else
    if
    :: old == PARKED -> ready_receiver(j)
    :: else
    fi
#endif
}

/* the parking finalizer, after the switch: CAS WAITING -> PARKED, else make ready itself */
#ifndef BUG_FINALIZER_NO_WAKE
#define FINALIZER_FAILED(ready_self) ready_self
#else
#define FINALIZER_FAILED(ready_self) skip
#endif
inline publish_parked_sender(i) {
    atomic {
        if
        :: sstate[i] == WAITING -> sstate[i] = PARKED
        :: else -> FINALIZER_FAILED(ready_sender(i))
        fi
    }
}
inline publish_parked_receiver(j) {
    atomic {
        if
        :: rstate[j] == WAITING -> rstate[j] = PARKED
        :: else -> FINALIZER_FAILED(ready_receiver(j))
        fi
    }
}

proctype Sender(byte i) {
    byte r, old;
    byte v = i + 1;
    lock();
    if
    :: closed -> unlock(); sclosed[i] = 1; goto finish
    :: else
    fi;
    if
    :: rqn > 0 ->  /* a parked receiver: hand off */
        pop_r(r);
        unlock();
#ifdef BUG_WAKE_BEFORE_COPY
        wake_receiver(r, DONE);
        rout[r] = v
#else
        rout[r] = v;
        wake_receiver(r, DONE)
#endif
    :: else ->
        if
        :: count < cap -> buf = v; count++; unlock()
        :: else ->  /* park with the value */
            sval[i] = v;
            sstate[i] = WAITING;
            push_s(i);
            unlock();
            sswitched[i] = 1;  /* suspend: switched out ... */
            publish_parked_sender(i);  /* ... then the finalizer */
            sready[i] == 1;    /* resumed */
            if
            :: sstate[i] == CLOSED -> sclosed[i] = 1
            :: else -> assert(sstate[i] == DONE)
            fi
        fi
    fi;
finish:
    senders_done++
}

proctype Receiver(byte j) {
    byte s, v, old;
again:
    v = 0;
    lock();
    if
    :: sqn > 0 ->  /* a parked sender: the buffer is full (capacity 0: always) */
        pop_s(s);
        if
        :: cap == 0 -> unlock(); v = sval[s]
        :: else ->
            v = buf;
#ifdef BUG_RECV_NO_REFILL
            buf = 0; count--;
#else
            buf = sval[s];  /* the sender's value takes the freed slot: FIFO */
#endif
            unlock()
        fi;
        wake_sender(s, DONE);
        goto got
    :: else
    fi;
    if
    :: count > 0 -> v = buf; buf = 0; count--; unlock(); goto got
    :: else
    fi;
    if
    :: closed -> unlock(); goto finish  /* closed and drained */
    :: else
    fi;
    /* park */
    rout[j] = 0;
    rstate[j] = WAITING;
    rready[j] = 0;
    push_r(j);
    unlock();
    rswitched[j] = 1;  /* suspend: switched out ... */
    publish_parked_receiver(j);  /* ... then the finalizer */
    rready[j] == 1;  /* resumed */
    rswitched[j] = 0;
    if
    :: rstate[j] == CLOSED -> assert(rout[j] == 0); goto finish
    :: else -> assert(rstate[j] == DONE); v = rout[j]; assert(v != 0)
    fi;
got:
    assert(v >= 1 && v <= NS);
    delivered[v]++;
    goto again;
finish:
    skip
}

proctype Closer() {
    byte dr[NR], ds[NS], drn, dsn, k, w, old;
    if
    :: true                      /* close at any time ... */
    :: senders_done == NS        /* ... or after every send returned */
    fi;
    lock();
    assert(closed == 0);
#ifndef BUG_CLOSE_FLAG_LATE
    closed = 1;
#endif
    /* detach every waiter */
    do
    :: rqn > 0 -> pop_r(w); dr[drn] = w; drn++
    :: sqn > 0 -> pop_s(w); ds[dsn] = w; dsn++
    :: rqn == 0 && sqn == 0 -> break
    od;
    unlock();
#ifdef BUG_CLOSE_FLAG_LATE
    lock();
    closed = 1;
    unlock();
#endif
    k = 0;
    do
    :: k < drn -> w = dr[k]; wake_receiver(w, CLOSED); k++
    :: k == drn -> break
    od;
    k = 0;
    do
    :: k < dsn -> w = ds[k]; wake_sender(w, CLOSED); k++
    :: k == dsn -> break
    od
}

init {
    byte v;
    if
    :: cap = 0
    :: cap = 1
    fi;
    atomic {
        run Sender(0); run Sender(1);
        run Receiver(0); run Receiver(1);
        run Closer()
    }
    _nr_pr == 1;  /* everyone finished (else: an invalid end state, a lost wake-up) */
    v = 1;
    do
    :: v <= NS ->
        assert(delivered[v] + sclosed[v - 1] == 1);  /* exactly once, or its send threw */
        v++
    :: v > NS -> break
    od;
    assert(count == 0 && lk == 0)
}
