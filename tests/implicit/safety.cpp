// safety.cpp — programs that implicit switches must not break, compiled by clang++ with the
// CoopQuantum plugin (test_implicit.cpp runs them): errno and a thread_local accumulator
// across checks on two processors, an OS mutex held across checked work, and the ABI code
// a translation unit brings along (thread-local wrappers and initialisers, a static
// initialiser with a loop) that must get no check (check_plugin.py --binary).
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "coop/coop.hpp"

namespace {

// g_total — what the thread_local accumulators held when their worker threads ended.
std::atomic<long> g_total{0};

// Accumulator — a per-OS-thread sum, added to g_total by its destructor at thread exit
// (a thread_local with a destructor: a TLS wrapper _ZTW and an initialiser __tls_init).
struct Accumulator {
    long v = 0;
    ~Accumulator() { g_total.fetch_add(v); }
};
thread_local Accumulator t_acc;

// A static initialiser with a loop and a call (_GLOBAL__sub_I_safety.cpp,
// __cxx_global_var_init): the pass must leave it alone.
std::vector<std::string> make_table() {
    std::vector<std::string> t;
    for (int i = 0; i < 64; ++i) t.push_back(std::to_string(i * 7919));
    return t;
}
const std::vector<std::string> g_table = make_table();

// burn — checked work (the same loop as scenarios.cpp's).
[[gnu::noinline]] std::uint64_t burn(std::uint64_t n) {
    std::uint64_t x = 1;
    for (std::uint64_t i = 0; i < n; ++i) x = x * 2862933555777941757ULL + (x >> 7) + i;
    return x;
}

std::atomic<std::uint64_t> g_sink{0};

}  // namespace

// coop_safety_errno — `activities` activities on `processors` workers each parse `n`
// overflowing numbers (errno = 0; strtol; errno == ERANGE, in a checked loop); returns how
// many ERANGEs were seen (activities * n when errno is the running thread's at every use).
extern "C" long coop_safety_errno(unsigned processors, int activities, long n) {
    std::atomic<long> seen{0};
    coop::Runtime rt({.processors = processors});
    rt.run([&] {
        std::vector<coop::Thread> ts;
        for (int a = 0; a < activities; ++a)
            ts.push_back(coop::spawn([&, a] {
                // 20 digits: always above LONG_MAX on LP64.
                std::string s = "9999999999999999999" + std::to_string(a % 10);
                long ranges = 0;
                long sum = 0;
                for (long i = 0; i < n; ++i) {
                    errno = 0;
                    char* end = nullptr;
                    const long v = std::strtol(s.c_str(), &end, 10);
                    if (errno == ERANGE) ++ranges;
                    sum += v & 1;
                }
                seen.fetch_add(ranges);
                g_sink += static_cast<std::uint64_t>(sum);
            }));
        for (auto& t : ts) t.join();
    });
    return seen.load();
}

// coop_safety_thread_local — `activities` activities on `processors` workers each add
// 0..n-1 (mod 8) to the thread_local accumulator in a checked loop; returns the sum of the
// accumulators at thread exit minus the expected sum (0: no update was lost or misplaced).
extern "C" long coop_safety_thread_local(unsigned processors, int activities, long n) {
    g_total = 0;
    long expected = 0;
    for (long i = 0; i < n; ++i) expected += i & 7;
    expected *= activities;
    {
        coop::Runtime rt({.processors = processors});
        rt.run([&] {
            std::vector<coop::Thread> ts;
            for (int a = 0; a < activities; ++a)
                ts.push_back(coop::spawn([n] {
                    for (long i = 0; i < n; ++i) t_acc.v += i & 7;
                }));
            for (auto& t : ts) t.join();
        });
    }  // the workers have ended: their accumulators are in g_total
    return g_total.load() - expected;
}

// coop_safety_os_mutex — one processor: activity A holds a std::mutex across checked work,
// activity B then takes the same mutex. Returns when both finished (a check that switched
// from A to B while A held the mutex would block the only worker in the mutex forever).
extern "C" long coop_safety_os_mutex() {
    std::mutex m;
    long done = 0;
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        coop::Thread a = coop::spawn([&] {
            std::lock_guard<std::mutex> g(m);
            g_sink += burn(2500000);
            ++done;
        });
        coop::Thread b = coop::spawn([&] {
            std::lock_guard<std::mutex> g(m);
            ++done;
        });
        a.join();
        b.join();
    });
    return done;
}

// coop_safety_os_mutex_switches — the quantum still works around the lock: after A's
// unlock, a quantum that ran out while A held the mutex switches (returns how often a
// yielding bystander ran between A's unlock and A's end: >= 1).
extern "C" long coop_safety_os_mutex_switches() {
    std::mutex m;
    long seen = -1;
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        std::atomic<bool> stop{false};
        std::atomic<long> runs{0};
        coop::Thread other = coop::spawn([&] {
            while (!stop.load()) {
                runs.fetch_add(1);
                coop::yield();
            }
        });
        coop::yield();
        long before = 0;
        {
            std::lock_guard<std::mutex> g(m);
            g_sink += burn(2500000);
            before = runs.load();
        }
        seen = runs.load() - before;
        stop = true;
        other.join();
    });
    return seen + static_cast<long>(g_table.size() == 64 ? 0 : 1000);
}
