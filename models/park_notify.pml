/* park_notify.pml — a Spin model of coop's park/wake protocol (runtimes/native/park.hpp).
 *
 * Processor 0 (Waker) makes one unit of work ready ROUNDS times and each time waits until
 * another processor has taken it (a program that needs two processors at once); processors
 * 1..NPARKERS (Parker) take work when there is some and park when there is none. Promela's
 * interleaving makes every access sequentially consistent, which is what park.hpp's seq_cst
 * atomics and fences give. futex_wait is atomic "sleep if the word still holds the value"
 * (the kernel's check), futex_wake clears the sleeper's flag. No timeouts, no spurious
 * wake-ups (they could only hide a lost wake-up).
 *
 * Checked: no lost wake-up — every process ends or rests at an end label; a Waker blocked
 * for ever on its unit while the Parkers sleep is an invalid end state. At the end the
 * token is free (assert in the final check) so later wake-ups are not suppressed.
 *
 * -DOLD_PROTOCOL models the earlier protocol of coop (one shared epoch futex, a
 * `working` count, a `waking` flag that every returning parker clears); Spin must find its
 * lost wake-up (the waking flag left set after a parker found work on its own).
 */

#ifndef NPARKERS
#define NPARKERS 2
#endif
#ifndef ROUNDS
#define ROUNDS 3
#endif
#define NPROC (NPARKERS + 1)

#define RUNNING 0
#define PARKED 1
#define WOKEN 2

byte work = 0;     /* units ready */
byte taken = 0;    /* units taken by parkers */
bit sleeping[NPROC];

#ifndef OLD_PROTOCOL
byte state[NPROC];   /* per-processor futex words */
byte parked = 0;
bit token = 0;

inline park(me) {
    state[me] = PARKED;
    parked++;
    if
    :: work > 0 -> skip
    :: else ->
        atomic { if :: state[me] == PARKED -> sleeping[me] = 1 :: else -> skip fi };
end_asleep:
        sleeping[me] == 0
    fi;
    atomic { s = state[me]; state[me] = RUNNING };
    if
    :: s == PARKED -> parked--
    :: s == WOKEN -> token = 0
    :: else -> skip
    fi
}

inline notify() {
    if
    :: parked == 0 -> skip
    :: else ->
        do
        :: atomic { t = token; token = 1 };
           if
           :: t == 1 -> break
           :: else -> skip
           fi;
           found = 0;
           i = 1;
           do
           :: i <= NPARKERS ->
               atomic { if :: state[i] == PARKED -> state[i] = WOKEN; found = 1 :: else -> skip fi };
               if
               :: found == 1 -> parked--; sleeping[i] = 0; break
               :: else -> i++
               fi
           :: else -> break
           od;
           if
           :: found == 1 -> break
           :: else ->
               token = 0;
               if
               :: parked == 0 -> break
               :: else -> skip
               fi
           fi
        od
    fi
}
#else
byte epoch = 0;
byte working = NPROC;
bit waking = 0;

inline park(me) {
    e = epoch;
    working--;
    if
    :: work > 0 -> skip
    :: else ->
        atomic { if :: epoch == e -> sleeping[me] = 1 :: else -> skip fi };
end_asleep:
        sleeping[me] == 0
    fi;
    working++;
    waking = 0
}

inline notify() {
    if
    :: working >= NPROC -> skip
    :: else ->
        atomic { t = waking; waking = 1 };
        if
        :: t == 1 -> skip
        :: else ->
            epoch++;
            atomic {   /* futex_wake(1): one sleeper, any */
                i = 1;
                do
                :: i <= NPARKERS && sleeping[i] == 1 -> sleeping[i] = 0; break
                :: i <= NPARKERS && sleeping[i] == 0 -> i++
                :: i > NPARKERS -> break
                od
            }
        fi
    fi
}
#endif

active proctype Waker() {
    byte r = 0, t = 0, i = 0;
    bit found = 0;
    do
    :: r < ROUNDS ->
        work++;
        notify();
        taken > r;   /* wait until another processor took it */
        r++
    :: else -> break
    od
}

active [NPARKERS] proctype Parker() {
    byte me = _pid;   /* 1..NPARKERS (the Waker is 0) */
    byte s = 0, e = 0;
end_idle:
    do
    :: atomic { work > 0 -> work--; taken++ }
    :: atomic { work == 0 -> skip };
        park(me)
    od
}

#ifndef OLD_PROTOCOL
/* When nothing can move any more, the token must be free (else every later notify() would
 * be skipped) and nobody may count as parked without sleeping. */
active proctype Final() {
    timeout ->
        assert(token == 0);
        assert(taken == ROUNDS)
}
#endif
