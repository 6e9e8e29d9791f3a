// external.hpp — backends that are programs (in any language) instead of C++ types.
//
// An external backend is declared by a manifest, a JSON file:
//
//   {"name": "go", "description": "goroutines, channels, sync.Mutex (Go's own runtime)",
//    "program": "coopbench-go", "args": [], "preemptive": true}
//
// ("program" relative to the manifest's folder, or absolute). The driver reads manifests
// from <build>/backends/*.json (written at configure time by coopbench_add_external_backend()
// in CMake; $COOPBENCH_BUILD_BACKENDS names another folder instead) and from every file or
// folder in $COOPBENCH_BACKENDS (colon-separated). For each
// it runs `program args... --list` once, which prints one JSON line:
//
//   {"protocol": 1, "workloads": ["create", ...], "context": {"go_version": "go1.19.8", ...}}
//
// The backend runs the listed workloads that the harness knows (any other is skipped, not
// failed, like a workload a C++ backend does not support). To measure a point, its runner
// (program_runner below) forks a child process that exec()s `program args...` (so timeout, peak RSS, CPU time
// and crash reports are the program's own), with one JSON request line on stdin:
//
//   {"protocol": 1, "backend": "go", "workload": "create", "params": {"N": "1000"},
//    "processors": 2, "pin": false, "stack_size": 0, "options": {}, "inject_fault": false,
//    "warmup": 0, "iterations": 1}
//
// (warmup/iterations: the runs wanted in this process, see external_outcomes)
//
// and reads the last line of its stdout as the reply:
//
//   {"status": "ok", "seconds": 0.01, "value": 12.3, "check": "passed", "counters": {...},
//    "cpu_seconds": 0.02}
//
// ("cpu_seconds", optional: the program's CPU time during the run, all its threads; the
// cpu_time of benchmark.json, harness/gbench_reporter.hpp)
// status "ok" with check "passed" is a measured point; any other check text fails it with
// that text as the reason; status "failed" (with "reason") or "unsupported" fails it too.
// The reply is read with a bound (kMaxReplyBytes per line, harness/child_process.hpp): a longer
// last line fails the point with "reply longer than ...". A manifest may declare
// "max_processors" (the most OS threads the program uses) and "source" (its origin).
// The full protocol: docs/adding-a-backend.md, "A backend in another language".
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/plan.hpp"
#include "harness/runner.hpp"

namespace coopbench {

// ExternalBackend — what the driver keeps of a loaded manifest.
struct ExternalBackend {
    std::string name;
    std::vector<std::string> command;            // the program, then its fixed arguments
    std::string manifest;                        // the manifest's path
    std::map<std::string, std::string> context;  // from --list, recorded in context.json
    bool iterates = false;                       // --list said "iterations": true
    std::vector<std::string> listed;             // the workloads --list names (known or not)
};

// load_external_backends — register every external backend found (see the file comment);
// once per process. A manifest of $COOPBENCH_BACKENDS that cannot be used is left out with
// one line on stderr; one of the build's (<build>/backends, or $COOPBENCH_BUILD_BACKENDS)
// is left out quietly and kept in left_out_backends(): its program may simply not be built
// yet, and `coopbench list`, a sweep of every backend and `-b NAME` say so.
void load_external_backends();

// LeftOutBackend — a build's manifest that load_external_backends() could not use.
struct LeftOutBackend {
    std::string name;      // the manifest's "name" (else its file name)
    std::string manifest;  // its path
    std::string reason;    // why it was left out (e.g. its program is not built)
};
const std::vector<LeftOutBackend>& left_out_backends();
// left_out_backend — the left-out build manifest called `name`, or nullptr.
const LeftOutBackend* left_out_backend(const std::string& name);

// load_manifest — register the backend of one manifest; the reason when it cannot.
std::optional<std::string> load_manifest(const std::string& path);

// external_backend — the external backend called `name`, or nullptr (a C++ backend).
const ExternalBackend* external_backend(const std::string& name);

// external_request — the request line for `point`.
std::string external_request(const Point& point, bool inject_fault);

// program_runner — the runner of an external backend's points (runner.hpp: PointRunner;
// its program exec'd in the point's own process), or nullptr for a C++ backend.
const PointRunner* program_runner(const std::string& backend);

// kMaxJsonDepth — the deepest nesting of arrays and objects the driver accepts in anything an
// external program prints (its --list answer, its replies) and in a manifest. Every protocol
// message is a few levels deep; a deeper one is refused before it is parsed, so no program can
// make the driver recurse without bound (printing or copying a 100,000-deep value overflows its
// stack).
inline constexpr int kMaxJsonDepth = 64;

// parse_program_json — `text` parsed as JSON when it nests at most kMaxJsonDepth levels;
// throws std::runtime_error (saying so) when it nests deeper, nlohmann's parse_error when
// it is no JSON.
nlohmann::json parse_program_json(const std::string& text);

// external_outcome — the outcome of a program's stdout (`exit_code` from its normal exit).
Outcome external_outcome(const std::string& out, int exit_code);

// external_outcomes — the runs of a program's stdout. A program that iterates (its --list
// says "iterations": true) replies {"runs": [reply, ...]} with one reply per requested run
// (warmup + iterations of the request); any other program replies once and its point is
// planned as one cold run (W=0, I=1: harness/plan.cpp records what it did).
std::vector<Outcome> external_outcomes(const std::string& out, int exit_code, int expected_runs);

// add_external_context — record the --list context of every external backend among
// `points` in `context` as "backend.<name>.<key>".
void add_external_context(nlohmann::json& context, const std::vector<Point>& points);

// add_build_context — record how every backend among `points` was built, as
// "backend.<name>.build": an external backend's from its --list context (its key "build":
// the compiler and profile the program reports), an in-process one's from this binary's
// compile facts (compiler, build type and its flags, IPO on/off; the backends of
// runtimes/native_implicit/ are compiled by clang with the plugin, plugin/CMakeLists.txt).
void add_build_context(nlohmann::json& context, const std::vector<Point>& points);

}  // namespace coopbench
