/* io_poll_birth.pml — the poller's birth (coop/src/io.cpp poller(), scheduler.cpp
 * SchedulerCore::park), checked with Spin: a processor that parked on its futex before the
 * poller existed is not left there while an fd's event waits and every other processor is
 * busy (no lost nudge).
 *
 * Processes
 * - idle: an idle processor's park, round after round: it reads whether the poller exists
 *   (active_poller()); if so it takes the poll token and parks Polling (announce, count,
 *   re-check, epoll_wait until the edge or the eventfd, dispatch the edge); if not it parks
 *   on its futex: announces Parked, counts itself, fences, re-checks for work and (the line
 *   under test) whether the poller exists now, then sleeps until a waker changes its word.
 * - maker: the first registration: publishes the poller (g_poller's store), then notify():
 *   fence, load the parked count, and if it is non-zero CAS the parked word Parked -> Woken
 *   (futex_wake). The rest of the runtime is busy: nobody else polls.
 * - peer: once the fd is registered (after the maker's store), its event arrives (an edge
 *   queued in the epoll set).
 * - check: when nothing can move any more, the edge must have been dispatched.
 *
 * Memory model: sequential consistency. Enough for x86-TSO: the two store -> load pairs of
 * the Dekker (the maker's store of g_poller then its load of the count; the parker's count
 * increment then its re-check of g_poller) are each separated by a seq_cst fence in the code
 * (notify's fence in Parking::wake_one; park_as's fetch_add + fence), which drains the store
 * buffer (Sewell et al., "x86-TSO", CACM 2010). Abstracted: one idle processor, the poll
 * token (free: nobody else is idle), the eventfd (no other waker), the wake-up token of
 * park.hpp (b) (one waker).
 *
 * Mutants (check_io_poll.sh: each must fail):
 *   NO_NUDGE          the maker does not notify
 *   NO_BIRTH_RECHECK  the futex parker does not re-check whether the poller exists
 */
#define RUNNING 0
#define PARKED  1
#define POLLING 2
#define WOKEN   3

bool poller = false;    /* g_poller != nullptr */
bool edge = false;      /* the fd's event, queued in the epoll set */
bool dispatched = false;
byte pstate = RUNNING;  /* the idle processor's park.hpp word */
byte parked = 0;

active proctype idle() {
    bool saw;
    byte old;
    do
    :: saw = poller;                                /* SchedulerCore::park's active_poller() */
        if
        :: saw ->                                   /* take_token (free), park_polling */
            pstate = POLLING;
            parked++;
            if
            :: edge -> skip                         /* has_work (the re-check) */
            :: else -> end_poll: edge               /* epoll_wait: the edge (no other waker) */
            fi;
            atomic { old = pstate; pstate = RUNNING };
            if :: old == POLLING -> parked-- :: else -> skip fi;
            atomic { edge -> edge = false; dispatched = true }
        :: else ->                                  /* the futex park */
            pstate = PARKED;
            parked++;                               /* seq_cst RMW + fence */
            if
#ifndef NO_BIRTH_RECHECK
            :: poller -> skip                       /* the re-check: go round */
#endif
            :: else -> end_futex: pstate != PARKED  /* futex_wait until the word changes */
            fi;
            atomic { old = pstate; pstate = RUNNING };
            if :: old == PARKED -> parked-- :: else -> skip fi
        fi
    od
}

active proctype maker() {
    poller = true;                                  /* g_poller's store */
#ifndef NO_NUDGE
    if                                              /* notify(): fence, then the count */
    :: parked > 0 ->
        atomic { if :: pstate == PARKED -> pstate = WOKEN; parked-- :: else -> skip fi }
    :: else -> skip
    fi
#endif
}

active proctype peer() {
    poller;                                         /* the fd is registered with it */
    edge = true
}

active proctype check() {
end_check:
    timeout -> assert(dispatched)
}
