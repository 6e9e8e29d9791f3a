// native.hpp — backends `native`, `native-ws` and `native-parasail`: coop, the lock-free
// cooperative runtime (coop.hpp), behind the harness's Backend concept (runtimes/concept.hpp).
//
// BasicNativeBackend<Api>: Api is coop::Algo<K> (NativeBackendOf<K>, what register.cpp
// registers: spawn, join, yield and the channel's hand-off reach algorithm K's scheduler
// with no run-time branch on the algorithm; so do its Mutex, CondVar and Semaphore's parking
// and wake-ups) or coop::AnyAlgo (NativeBackend: the untyped
// API, the algorithm chosen at run time by the option scheduling=global|work_stealing|
// parasail; the tests that sweep the three algorithms and the clang plugin's backends use it).
//
// Options: RuntimeOptions::processors (worker OS threads), ::pin (one CPU each, from
// coop::internal::choose_cpus, cpus.hpp), ::stack_size (0: coop::kDefaultStackSize) and the extra
// option guard=on|off (off: no guard page, the paper's micro stacks; see kOptions).
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtimes/concept.hpp"
#include "coop/channel.hpp"
#include "coop/coop.hpp"
#include "coop/io.hpp"

namespace coopbench {

// scheduling_name — the option value that selects Scheduling k.
constexpr std::string_view scheduling_name(coop::Scheduling k) {
    return k == coop::Scheduling::work_stealing ? "work_stealing"
           : k == coop::Scheduling::parasail    ? "parasail"
                                                : "global";
}

template <class Api>
struct BasicNativeBackend {
    static constexpr std::string_view name = "native";
    static constexpr bool preemptive = false;
    // typed — whether Api fixes the algorithm at compile time (coop::Algo<K>).
    static constexpr bool typed = !std::is_same_v<Api, coop::AnyAlgo>;

    // options — coop::Options from the harness's options (throws std::invalid_argument).
    static coop::Options options(const RuntimeOptions& o) {
        coop::Options c;
        c.processors = o.processors;
        c.pin = o.pin;
        c.stack_size = o.stack_size;
        const std::string guard = o.option("guard", "on");
        if (guard != "on" && guard != "off")
            throw std::invalid_argument("native: guard must be on or off, not '" + guard + "'");
        c.guard = guard == "on";
        // scheduling: fixed by the registered variant (register.cpp): native = global,
        // native-ws = work_stealing, native-parasail = parasail; a typed backend accepts only
        // its own (its entry points assume it).
        if constexpr (typed) {
            const std::string s = o.option("scheduling", std::string(scheduling_name(Api::kind)));
            if (s != scheduling_name(Api::kind))
                throw std::invalid_argument("native: this backend's scheduling is " +
                                            std::string(scheduling_name(Api::kind)) + ", not '" + s + "'");
            c.scheduling = Api::kind;
        } else {
            const std::string s = o.option("scheduling", "global");
            if (s == "global") c.scheduling = coop::Scheduling::global;
            else if (s == "work_stealing") c.scheduling = coop::Scheduling::work_stealing;
            else if (s == "parasail") c.scheduling = coop::Scheduling::parasail;
            else
                throw std::invalid_argument("native: scheduling must be global, work_stealing or parasail, not '" + s +
                                            "'");
        }
        return c;
    }

    class Runtime {
      public:
        explicit Runtime(const RuntimeOptions& o) : rt_(options(o)) { active = &rt_; }
        ~Runtime() { active = nullptr; }
        Runtime(const Runtime&) = delete;
        Runtime& operator=(const Runtime&) = delete;
        template <class F>
        void run(F&& main) {
            rt_.run(std::forward<F>(main));
        }
        // counters — the scheduler's counters of this run (coop::Runtime::stats), recorded by
        // the harness per point (registry.hpp run_point).
        std::map<std::string, std::uint64_t> counters() const { return rt_.stats(); }

      private:
        coop::Runtime rt_;
    };

    // active — the running runtime (the harness runs one at a time), for start_failure.
    static inline coop::Runtime* active = nullptr;

    // start_failure — why a joined activity never ran (Thread::join returned false: no
    // stack could be had for it); Group::join_all (workloads/common.hpp) records it.
    static std::string start_failure() {
        const std::string why = active != nullptr ? active->stack_failure() : std::string();
        return "coop: an activity got no stack and never ran (" + (why.empty() ? std::string("unknown") : why) + ")";
    }

    using Thread = typename Api::Thread;
    // Mutex, CondVar, Semaphore — coop's, parking and waking through Api's suspend /
    // make_ready (mutex.hpp): a typed backend's reach its algorithm's scheduler with no
    // run-time branch; the untyped adapter's are coop::Mutex, CondVar, Semaphore.
    using Entry = std::conditional_t<typed, Api, coop::internal::Untyped>;
    using Mutex = coop::BasicMutex<Entry>;
    using CondVar = coop::BasicCondVar<Entry>;
    using Semaphore = coop::BasicSemaphore<Entry>;
    // Channel — coop's own channel (channel.hpp: direct hand-off to a parked peer), for
    // every scheduling variant (native, native-ws, native-parasail): make_ready places the
    // woken peer as each algorithm does (through Api's suspend / make_ready).
    template <class T>
    using Channel = coop::Channel<T, ChannelClosed, Api>;

    // spawn — a coop activity; allocation failure becomes SpawnError.
    template <class F>
    static Thread spawn(F&& fn) {
        try {
            return Api::spawn(std::forward<F>(fn));
        } catch (const std::bad_alloc&) {
            throw SpawnError("coop::spawn: out of memory for the activity descriptor");
        }
    }

    static void yield() { Api::yield(); }

    // Io — the I/O workloads' socket calls (workloads/io/echo.hpp, HasSocketIo) through coop's
    // poller (coop/io.hpp): the syscall first, a park of the calling activity only on EAGAIN,
    // so a connection's thread is an activity that never blocks its processor. POSIX-style
    // results (-1 and errno) because that is what the workloads' server is written against;
    // coop's own API returns std::error_code.
    struct Io {
        // errno_of — an error of coop::io as an errno value (generic or system category:
        // the value is the errno; coop::io::errc::eof is not an error of these calls).
        static int errno_of(const std::error_code& ec) noexcept {
            return ec.category() == std::generic_category() || ec.category() == std::system_category() ? ec.value()
                                                                                                         : EIO;
        }
        // accept — the next connection, non-blocking and close-on-exec; parks while none is
        // pending. The listening socket is made non-blocking here (idempotent), since the
        // server creates it with plain socket(2) for every backend.
        static int accept(int lfd) {
            if (const std::error_code ec = coop::io::set_nonblocking(lfd)) {
                errno = errno_of(ec);
                return -1;
            }
            for (;;) {
                const int fd = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd >= 0) return fd;
                if (errno == EINTR) continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
                if (const std::error_code ec = coop::io::wait_readable(lfd)) {
                    errno = errno_of(ec);
                    return -1;
                }
            }
        }
        static ssize_t read(int fd, void* buf, std::size_t n) {
            std::error_code ec;
            const std::size_t got = coop::io::read(fd, buf, n, ec);
            if (ec) {
                errno = errno_of(ec);
                return -1;
            }
            return static_cast<ssize_t>(got);
        }
        static ssize_t write(int fd, const void* buf, std::size_t n) {
            std::error_code ec;
            const std::size_t put = coop::io::write(fd, buf, n, ec);
            if (ec) {
                errno = errno_of(ec);
                return -1;
            }
            return static_cast<ssize_t>(put);
        }
        // close — wakes an activity parked on fd (operation_canceled), then close(2).
        static void close(int fd) { (void)coop::io::close(fd); }
        // nonblocking — fd (a pipe the workload reads while the server runs) made
        // non-blocking, so that its reads park instead of blocking the processor.
        static void nonblocking(int fd) { (void)coop::io::set_nonblocking(fd); }
    };

    // kBytesPerThread — memory one spawned, not yet run activity costs: the descriptor with
    // a small closure (one 64 B slab block, slab.hpp: kDescriptorBlock), its queue node (a
    // 16 B slab block, hazard.hpp's Node pool), the join handle in the caller's vector (8 B)
    // and slack for larger closures (operator new beyond 64 B).
    static constexpr std::size_t kBytesPerThread = 160;

    // capacity — refuses only what cannot fit: the descriptors in the available memory.
    // (Stacks are allocated at first run; how many run at once is the workload's business.)
    // A limit of the system known before the run: the reason begins "system limit: "
    // (harness/runner.hpp, kRefusalPrefix), so the point is recorded refused, not failed.
    static std::optional<std::string> capacity(const RuntimeOptions&, std::size_t threads) {
        std::ifstream meminfo("/proc/meminfo");
        std::string key;
        std::size_t kib = 0;
        while (meminfo >> key >> kib) {
            if (key == "MemAvailable:") {
                const double need = static_cast<double>(threads) * kBytesPerThread;
                const double have = static_cast<double>(kib) * 1024.0;
                if (need > have)
                    return "system limit: native: " + std::to_string(threads) + " activity descriptors need ~" +
                           std::to_string(static_cast<long long>(need / (1 << 20))) + " MiB, " +
                           std::to_string(static_cast<long long>(have / (1 << 20))) + " MiB available";
                return std::nullopt;
            }
            meminfo.ignore(1 << 10, '\n');
        }
        return std::nullopt;
    }
};

// NativeBackend — the untyped adapter: the algorithm from the option `scheduling`.
using NativeBackend = BasicNativeBackend<coop::AnyAlgo>;
// NativeBackendOf<K> — the typed adapter of algorithm K (register.cpp: native, native-ws,
// native-parasail).
template <coop::Scheduling K>
using NativeBackendOf = BasicNativeBackend<coop::Algo<K>>;

// is_native_backend_v — B is one of the adapters above (typed or not).
template <class B>
inline constexpr bool is_native_backend_v = false;
template <class Api>
inline constexpr bool is_native_backend_v<BasicNativeBackend<Api>> = true;

static_assert(Backend<NativeBackend>, "NativeBackend does not satisfy coopbench::Backend");
static_assert(HasChannel<NativeBackend>, "NativeBackend::Channel does not satisfy coopbench::HasChannel");
static_assert(Backend<NativeBackendOf<coop::Scheduling::work_stealing>>, "NativeBackendOf does not satisfy Backend");
static_assert(HasChannel<NativeBackendOf<coop::Scheduling::work_stealing>>, "NativeBackendOf: no HasChannel");
// The typed adapters' join handles and channels are the typed API's (no run-time branch on the
// algorithm where the harness measures: spawn, join, yield, the channel's hand-off).
static_assert(std::is_same_v<NativeBackendOf<coop::Scheduling::parasail>::Thread,
                             coop::Algo<coop::Scheduling::parasail>::Thread>);
static_assert(std::is_same_v<NativeBackendOf<coop::Scheduling::global>::Channel<long>,
                             coop::Channel<long, ChannelClosed, coop::Algo<coop::Scheduling::global>>>);
static_assert(std::is_same_v<NativeBackendOf<coop::Scheduling::work_stealing>::Mutex,
                             coop::BasicMutex<coop::Algo<coop::Scheduling::work_stealing>>>);
static_assert(std::is_same_v<NativeBackend::Mutex, coop::Mutex>);
static_assert(std::is_same_v<NativeBackend::CondVar, coop::CondVar>);
static_assert(std::is_same_v<NativeBackend::Semaphore, coop::Semaphore>);

}  // namespace coopbench
