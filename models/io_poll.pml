/* io_poll.pml — coop's I/O wait (coop/src/io.cpp) and its poller hand-off (park.hpp's Polling
 * state, the eventfd poke), checked with Spin: no wake-up is lost.
 *
 * Processes
 * - waiter: an activity reading an fd: the syscall (data? else EAGAIN), then wait(): CAS
 *   Ready->Empty (retry the syscall) or CAS Empty->Wait, the switch, and on the resumed side
 *   the finalizer's commit CAS Wait->activity; if the commit fails it is made ready at once.
 *   After its resume: exchange Empty, back to the syscall. Ends when it read the data, or saw
 *   the fd closed.
 * - peer: the data arrives (the kernel queues one edge event for the epoll set); with CLOSE,
 *   perhaps never (then only the close can end the waiter's wait).
 * - closer (-DCLOSE): coop::io::close: closed = true (seq bump), then unblock(slot, false).
 * - waker: publishes work for a processor (a timer, an inbox entry), then wake_one's half: if
 *   a processor is parked, CAS its word Polling->Woken and poke the eventfd.
 * - poller: the one processor that holds the poll token: announces Polling, counts itself
 *   parked, re-checks for work, blocks in epoll_wait until an edge or the eventfd, leaves
 *   (exchange Running), drains the eventfd, hands out the edge (unblock(slot, true): the
 *   activity it takes from the slot becomes runnable), runs the work. It may sleep for good
 *   (a valid end state), but a waiter parked for good is an invalid end state (a lost I/O
 *   wake-up), and so is pending work when nothing can move any more (check's assertion: a
 *   lost poke).
 *
 * Memory model: sequential consistency. Enough for x86-TSO here: every step that needs a
 * store then a load of another location to be ordered (the waiter's CAS to Wait then its load
 * of `closed`; close's seq bump then its look at the slot; the parker's count then its
 * re-check; the waker's publication then its look at the count) is a locked RMW or is
 * followed by an mfence in the code (seq_cst), which drains the store buffer (Sewell et al.,
 * "x86-TSO", CACM 2010). What it abstracts: one fd, one waiter, one direction, one poller and
 * one waker; the deadline timer is a second unblock(slot, false) like close's (wait_id and the
 * descriptor lock keep a late one off later waits: not modelled); futex sleepers and the
 * preference for them in wake() are not modelled (park_notify.pml checks them).
 *
 * Mutants (check_io_poll.sh: each must fail):
 *   NO_REQUEUE   the finalizer does not make the waiter ready when its commit fails
 *   NO_RECHECK   the poller blocks without re-checking for work after announcing itself
 *   NO_POKE      the waker moves the poller's word to Woken but writes no eventfd
 *   NO_CLOSE_RECHECK (with CLOSE) the waiter does not look at `closed` after its CAS to Wait
 */
#define EMPTY 0
#define READY 1
#define WAIT  2
#define ACT   3

#define RUNNING 0
#define POLLING 1
#define WOKEN   2

byte slot = EMPTY;
bool data = false;      /* bytes readable in the kernel */
bool edge = false;      /* an edge event queued in the epoll set */
bool runnable = false;  /* the waiter is in a ready queue */
bool closed = false;
bool waiter_done = false;

bool work = false;      /* the waker's published work */
bool work_done = false;
byte pstate = RUNNING;  /* the poller's park.hpp word */
byte parked = 0;
bool evfd = false;      /* the eventfd's counter is non-zero */

active proctype waiter() {
    bool ok;
syscall:
    if
    :: atomic { data -> data = false }; goto done          /* read() returned data */
    :: atomic { !data && closed } -> goto done             /* EBADF */
    :: else -> skip                                        /* EAGAIN */
    fi;
    /* wait(): */
    do
    :: atomic { slot == READY -> slot = EMPTY }; goto syscall
    :: atomic { slot == EMPTY -> slot = WAIT }; break
    od;
#ifndef NO_CLOSE_RECHECK
    /* the re-check after the CAS to Wait (Dekker with close) */
    if
    :: closed -> atomic { if :: slot == READY -> slot = EMPTY; goto syscall :: else -> slot = EMPTY fi }; goto done
    :: else -> skip
    fi;
#endif
    /* switch away; on the resumed side, fin_io_park's commit: */
    atomic {
        ok = (slot == WAIT);
        if :: ok -> slot = ACT :: else -> skip fi
    }
    if
    :: !ok ->
#ifndef NO_REQUEUE
        runnable = true
#else
        skip
#endif
    :: else -> skip
    fi;
    runnable;                       /* parked until someone makes it ready */
    runnable = false;
    atomic { ok = (slot == READY); slot = EMPTY };
    if
    :: !ok && closed -> goto done   /* operation_canceled */
    :: else -> goto syscall
    fi;
done:
    waiter_done = true
}

active proctype peer() {
#ifdef CLOSE
    if                              /* with a close, the data may never come */
    :: atomic { data = true; edge = true }
    :: skip
    fi
#else
    atomic { data = true; edge = true }
#endif
}

#ifdef CLOSE
active proctype closer() {
    closed = true;                  /* seq bump (seq_cst RMW) */
    /* unblock(slot, false) */
    atomic {
        if
        :: slot == WAIT -> slot = EMPTY
        :: slot == ACT -> slot = EMPTY; runnable = true
        :: else -> skip
        fi
    }
}
#endif

/* check: when nothing can move any more (timeout), the work must have run: a poller asleep
 * in epoll_wait (a valid end state: nothing else may come) beside pending work lost it. */
active proctype check() {
end_check:
    timeout -> assert(work_done)
}

active proctype waker() {
    work = true;                    /* publish, then the fence of wake_one */
    if
    :: parked > 0 ->
        if
        :: atomic { pstate == POLLING -> pstate = WOKEN; parked-- };
#ifndef NO_POKE
            evfd = true             /* poller_poke: the eventfd write */
#else
            skip
#endif
        :: else -> skip             /* it is leaving on its own: it runs the work next */
        fi
    :: else -> skip
    fi
}

active proctype poller() {
    byte old;
    do
    :: /* SchedulerCore::park -> Parking::park_polling */
        pstate = POLLING;
        parked++;
#ifndef NO_RECHECK
        if
        :: work || runnable -> skip            /* has_work: found work, no block */
        :: else -> end_block: (edge || evfd)   /* epoll_wait until an event or a poke */
        fi;
#else
end_block2: (edge || evfd);
#endif
        atomic { old = pstate; pstate = RUNNING };
        if :: old == POLLING -> parked-- :: else -> skip fi;
        evfd = false;                           /* the blocking poll drains the eventfd */
        /* dispatch: unblock(slot, true) for the edge */
        if
        :: atomic { edge -> edge = false;
               if
               :: slot == READY -> skip
               :: slot == ACT -> slot = READY; runnable = true
               :: else -> slot = READY
               fi }
        :: else -> skip
        fi;
        /* run what is ready */
        if :: atomic { work -> work = false; work_done = true } :: else -> skip fi
    od
}
