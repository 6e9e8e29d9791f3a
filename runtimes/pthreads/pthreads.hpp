// pthreads.hpp — backend `pthreads`: POSIX threads, pthread_mutex_t, pthread_cond_t,
// sem_t and sched_yield. Threads are restricted to the run's P cores by an affinity mask
// chosen from hwloc's topology (runtimes/os).
//
// Precondition (runtimes/concept.hpp): one Runtime at a time per process, and no other
// OS-thread backend's Runtime alive at the same time. The Runtime publishes its thread
// attributes (stack size, affinity) in the process-wide static `attr`, which the static
// spawn reads; a second Runtime would overwrite it, and destroying either clears it.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "runtimes/concept.hpp"
#include "runtimes/os/os_threads.hpp"

namespace coopbench {

struct PthreadsBackend {
    static constexpr std::string_view name = "pthreads";
    static constexpr bool preemptive = true;

    // Attributes every spawned thread gets (affinity, stack size); set by Runtime.
    static inline pthread_attr_t* attr = nullptr;

    class Thread {
      public:
        Thread() = default;
        explicit Thread(pthread_t t) : t_(t), joinable_(true) {}
        Thread(Thread&& o) noexcept : t_(o.t_), joinable_(std::exchange(o.joinable_, false)) {}
        Thread& operator=(Thread&& o) noexcept {
            if (this != &o) {
                if (joinable_) join();
                t_ = o.t_;
                joinable_ = std::exchange(o.joinable_, false);
            }
            return *this;
        }
        ~Thread() {
            if (joinable_) join();
        }
        void join() {
            if (joinable_) {
                pthread_join(t_, nullptr);
                joinable_ = false;
            }
        }

      private:
        pthread_t t_{};
        bool joinable_ = false;
    };

    template <class F>
    static Thread spawn(F&& fn) {
        using Fn = std::decay_t<F>;
        auto* heap = new Fn(std::forward<F>(fn));
        pthread_t t;
        int err = pthread_create(
            &t, attr,
            [](void* p) -> void* {
                std::unique_ptr<Fn> f(static_cast<Fn*>(p));
                (*f)();
                return nullptr;
            },
            heap);
        if (err != 0) {
            delete heap;
            throw SpawnError("pthread_create: " + os::errno_name(err));
        }
        return Thread(t);
    }

    static void yield() { sched_yield(); }

    class Mutex {
      public:
        Mutex() { pthread_mutex_init(&m_, nullptr); }
        ~Mutex() { pthread_mutex_destroy(&m_); }
        Mutex(const Mutex&) = delete;
        Mutex& operator=(const Mutex&) = delete;
        void lock() { pthread_mutex_lock(&m_); }
        bool try_lock() { return pthread_mutex_trylock(&m_) == 0; }
        void unlock() { pthread_mutex_unlock(&m_); }
        pthread_mutex_t* native() { return &m_; }

      private:
        pthread_mutex_t m_;
    };

    class CondVar {
      public:
        CondVar() { pthread_cond_init(&c_, nullptr); }
        ~CondVar() { pthread_cond_destroy(&c_); }
        CondVar(const CondVar&) = delete;
        CondVar& operator=(const CondVar&) = delete;
        void wait(Mutex& m) { pthread_cond_wait(&c_, m.native()); }
        void notify_one() { pthread_cond_signal(&c_); }
        void notify_all() { pthread_cond_broadcast(&c_); }

      private:
        pthread_cond_t c_;
    };

    class Semaphore {
      public:
        explicit Semaphore(std::ptrdiff_t initial) { sem_init(&s_, 0, static_cast<unsigned>(initial)); }
        ~Semaphore() { sem_destroy(&s_); }
        Semaphore(const Semaphore&) = delete;
        Semaphore& operator=(const Semaphore&) = delete;
        void acquire() {
            while (sem_wait(&s_) != 0 && errno == EINTR) {
            }
        }
        void release() { sem_post(&s_); }

      private:
        sem_t s_;
    };

    class Runtime {
      public:
        explicit Runtime(const RuntimeOptions& o) {
            pthread_attr_init(&attr_);
            if (o.stack_size) pthread_attr_setstacksize(&attr_, o.stack_size);
            cpu_set_t mask = os::cpu_mask(o.processors);
            pthread_attr_setaffinity_np(&attr_, sizeof(mask), &mask);
            attr = &attr_;
        }
        ~Runtime() {
            attr = nullptr;
            pthread_attr_destroy(&attr_);
        }
        Runtime(const Runtime&) = delete;
        Runtime& operator=(const Runtime&) = delete;

        template <class F>
        void run(F&& main) {
            Thread t = spawn(std::forward<F>(main));
            t.join();
        }

      private:
        pthread_attr_t attr_;
    };

    static std::optional<std::string> capacity(const RuntimeOptions& o, std::size_t threads) {
        return os::thread_capacity_problem(threads, o.stack_size ? o.stack_size : 8u << 20);
    }
};

}  // namespace coopbench
