// child_process.hpp — what every point measured in its own process shares, whichever kind
// of backend it is (runner.hpp: PointRunner): the fork into a fresh process group that dies
// with the driver, the memory limit, stdout and stderr read with a bound, the timeout that
// kills the whole group, the child's rusage, and the reasons a fork ended early.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <set>
#include <string>

#include "harness/runner.hpp"

namespace coopbench {

// The longest line the driver reads from a point's stdout (an external program's reply, or a
// C++ child's line per run), and the tail of its stderr it keeps.
inline constexpr std::size_t kMaxReplyBytes = std::size_t{1} << 20;
inline constexpr std::size_t kStderrTailBytes = 64 * 1024;

// ReplyReader — a child's stdout taken in chunks with bounded memory: each complete
// non-blank line up to `limit` bytes goes to `each_line`, and the last one is kept; a longer
// line is counted, not kept.
class ReplyReader {
  public:
    explicit ReplyReader(std::size_t limit) : limit_(limit) {}
    void feed(const char* data, std::size_t n, const std::function<void(std::string&&)>& each_line);
    // too_long — the reply (the last non-blank line, complete or not) exceeded the limit.
    bool too_long() const;
    bool has_last() const;
    // last — the last non-blank line (an unfinished last line included).
    const std::string& last() const;
    std::size_t longest() const { return longest_; }  // bytes of the longest line seen
    bool any_too_long() const { return any_too_long_; }

  private:
    std::size_t limit_;
    std::string pending_, last_;
    std::size_t current_ = 0, longest_ = 0;
    bool overflow_ = false, too_long_last_ = false, any_too_long_ = false, has_last_ = false;
};

// ChildRun — how a point's child process ended.
struct ChildRun {
    std::string error;      // pipe or fork failed: nothing ran (the other fields are unset)
    int status = 0;         // wait4's status
    bool timed_out = false;  // killed (with its process group) at the timeout
    bool interrupted = false;  // killed by interrupt_running_child (the driver's SIGINT/SIGTERM)
    rusage usage{};         // the child's, from wait4
    std::string stderr_tail;  // the last kStderrTailBytes (or up to twice that) of its stderr
};

// run_child — fork a child that leads its own process group, dies with the driver
// (PR_SET_PDEATHSIG) and runs under opts.memory_limit_bytes, with stderr to a pipe; `child`
// runs in it with the write end of the stdout pipe; when it returns, the child exits with
// status 0 without running exit handlers (a child that execs never returns).
// The parent feeds stdout to `reply` (each complete line to `each_line`) and keeps stderr's
// tail until the child exits (not until EOF: a descendant may hold the pipes open), the
// timeout, or interrupt_running_child; then it ends the child's whole process tree (its
// group, and through this process as a subreaper every descendant that left the group),
// reads what is left in the pipes, and waits.
ChildRun run_child(const RunnerOptions& opts, const std::function<void(int stdout_fd)>& child, ReplyReader& reply,
                   const std::function<void(std::string&&)>& each_line);

// interrupt_running_child — async-signal-safe, for the driver's SIGINT/SIGTERM handler:
// kill the running point's child and group (false when no point runs in a child); run_child
// then ends the rest of its tree and returns with `interrupted` set.
bool interrupt_running_child();

// reap_point_tree — in a point's child (run_child's `child`), before it execs a program:
// fork; the new process returns (and execs the program), while this one stays as the point's
// reaper until the program exits, then exits as it did (its status, or dies of its signal),
// so run_child sees the program's end. The reaper is the child subreaper of the program's
// whole tree (setsid daemons included) and outside the driver's process group; when the driver
// dies, even by kill -9 of every coopbench process at once (no one is left to clean up
// there), its death signal (SIGTERM, PR_SET_PDEATHSIG) makes the reaper end that tree.
void reap_point_tree();

// become_subreaper — make this process the child subreaper of its descendants
// (PR_SET_CHILD_SUBREAPER): an orphan among them becomes its child, not init's.
void become_subreaper();

// end_descendants — SIGKILL and reap every child of this process but those in `keep`, and
// what they leave (orphans come back here, a subreaper), until none is left; returns how
// many ended.
std::size_t end_descendants(const std::set<pid_t>& keep);

// run_supervised — run `main` in a child process while this one (the pid its caller knows)
// supervises it: a subreaper that passes SIGINT, SIGTERM, SIGHUP and SIGQUIT on, and, when
// the child ends however it ends (kill -9 included), ends every descendant left, then exits
// as the child did. The child gets SIGTERM when the supervisor dies (kill -9 of it), and
// ends its points as on any SIGTERM. So a point's process tree never outlives the driver,
// whichever of the two is killed; only both at once (kill -9 of their process group) leaves
// a point's descendants to init.
int run_supervised(const std::function<int()>& main);

// end_fork — the common end of a fork measured in a child: the child's peak RSS and CPU
// time into `m`, then, unless its last run already failed, one failed run saying why the
// fork ended early: `failure` (the runner's own reason, e.g. an unreadable reply), else the
// timeout, the signal that killed it, or an exit without all `expected_runs` results (with
// the telling line of its stderr).
void end_fork(Measurement& m, const ChildRun& c, int expected_runs, std::string failure, const RunnerOptions& opts);

// reply_too_long — the reason of a fork whose stdout had a line longer than kMaxReplyBytes;
// `whose`: "program's" or "point's process's".
std::string reply_too_long(const ReplyReader& reply, const std::string& whose);

}  // namespace coopbench
