// warnings.cpp — patterns the CoopQuantum plugin cannot make right and reports at compile
// time (check_plugin.py compiles this file with the plugin and reads the warnings): libc's
// static result buffers used after a possible switch, std::atomic::wait and what is built on
// it, a thread_local touched only to construct it, a longjmp out of a no-switch bracket.
// Each `warn_*` function should draw exactly one warning naming it; each `quiet_*` none.
#include <arpa/inet.h>
#include <pthread.h>
#include <setjmp.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <latch>
#include <semaphore>

volatile std::uint64_t g_sink;
[[gnu::noinline]] std::uint64_t crunch_value(std::uint64_t n) {
    std::uint64_t x = 1;
    for (std::uint64_t i = 0; i < n; ++i) x = x * 2862933555777941757ULL + (x >> 7) + i;
    return x;
}
[[gnu::noinline]] void crunch(std::uint64_t n) { g_sink = crunch_value(n); }  // checked: it may switch

// libc's static buffers.
int warn_inet_ntoa_across_work(in_addr a, const char* want) {
    const char* s = inet_ntoa(a);
    crunch(1000);  // a possible switch between the call and the use
    return std::strcmp(s, want);
}
int quiet_inet_ntoa_used_at_once(in_addr a, char* out) {
    std::strcpy(out, inet_ntoa(a));  // copied before anything can switch
    crunch(1000);
    return out[0];
}
int warn_localtime_across_work(time_t t) {
    std::tm* tm = std::localtime(&t);
    crunch(1000);
    return tm->tm_year;
}
int quiet_localtime_r(time_t t) {
    std::tm tm{};
    localtime_r(&t, &tm);
    crunch(1000);
    return tm.tm_year;
}
int warn_strtok_keeps_state(char* line) {
    int n = 0;
    for (char* w = std::strtok(line, " "); w != nullptr; w = std::strtok(nullptr, " ")) {
        crunch(10);
        n += w[0];
    }
    return n;
}

// Blocking waits of the C++ library.
int warn_atomic_wait(std::atomic<int>& a) {
    a.wait(0);
    return a.load();
}
void warn_semaphore_acquire(std::counting_semaphore<4>& s) { s.acquire(); }
void warn_latch_wait(std::latch& l) { l.wait(); }
int quiet_atomic_spin(std::atomic<int>& a) {
    while (a.load() == 0) {
    }
    return a.load();
}

// A thread_local touched only to construct it.
struct Flusher {
    ~Flusher() { std::fputs("", stdout); }
};
thread_local Flusher t_flusher;
thread_local long t_count;
void warn_touch_flusher(int n) {
    (void)t_flusher;
    for (int i = 0; i < n; ++i) {
        crunch(10);
        ++t_count;
    }
}

// longjmp out of a call given a thread-local's address (bracketed).
struct Parser {
    int state = 0;
    void parse(jmp_buf* env, int bad) {
        ++state;
        crunch(100);
        if (bad) longjmp(*env, 1);
    }
};
thread_local Parser t_parser;
[[gnu::noinline]] void warn_longjmp_parse(jmp_buf* env, int bad) { t_parser.parse(env, bad); }
struct Quiet {
    int state = 0;
    void parse(int bad) {
        ++state;
        crunch(100);
        if (bad) throw 1;  // an exception closes the bracket
    }
};
thread_local Quiet t_quiet;
[[gnu::noinline]] void quiet_throw_parse(int bad) { t_quiet.parse(bad); }
