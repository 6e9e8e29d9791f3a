#include "harness/external.hpp"

#include "harness/child_process.hpp"  // run_child, kMaxReplyBytes
#include "harness/csv.hpp"            // clean_text, cut_text
#include "harness/io_point.hpp"       // serves_io, io_host_command
#include "build_facts.hpp"            // generated: harness/CMakeLists.txt

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

namespace coopbench {

namespace fs = std::filesystem;

namespace {

std::map<std::string, ExternalBackend>& externals() {
    static std::map<std::string, ExternalBackend> m;
    return m;
}

// Never called by the driver: an external point's runner (ProgramRunner) execs its program
// in the point's child process. It keeps the registry's runner table (what a backend runs)
// the same for C++ and external backends.
Outcome external_runner_stub(const Context&) {
    return Outcome::failed("an external backend runs only in its own process (coopbench::measure)");
}

std::vector<char*> c_argv(std::vector<std::string>& args) {
    std::vector<char*> v;
    for (auto& a : args) v.push_back(a.data());
    v.push_back(nullptr);
    return v;
}

// run_list — `command --list`: its stdout, or the reason it failed (timeout 20 s).
std::optional<std::string> run_list(std::vector<std::string> command, std::string& out) {
    command.push_back("--list");
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
    std::fflush(nullptr);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return std::string("fork: ") + std::strerror(errno);
    if (pid == 0) {
        // It dies with the driver (a driver killed while a program answers --list, e.g. by
        // `timeout -s KILL`, left it running); the check closes the window before prctl.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        setpgid(0, 0);
        dup2(pipefd[1], STDOUT_FILENO);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, STDIN_FILENO);
        auto argv = c_argv(command);
        execv(argv[0], argv.data());
        std::fprintf(stderr, "coopbench: cannot run %s: %s\n", argv[0], std::strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    char buf[4096];
    bool timed_out = false, too_long = false;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{pipefd[0], POLLIN, 0};
        int r = poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        ssize_t n = read(pipefd[0], buf, sizeof buf);
        if (n > 0) {
            // Bounded: a program that floods its --list answer cannot take the driver down.
            if (out.size() + static_cast<std::size_t>(n) > kMaxReplyBytes) {
                too_long = true;
                break;
            }
            out.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            break;
        }
    }
    close(pipefd[0]);
    if (timed_out || too_long) kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) return std::string("--list did not answer within 20 s");
    if (too_long) return "--list answer longer than " + std::to_string(kMaxReplyBytes) + " bytes";
    if (WIFSIGNALED(status)) return "--list was killed by signal " + std::to_string(WTERMSIG(status));
    if (WEXITSTATUS(status) != 0) return "--list exited with status " + std::to_string(WEXITSTATUS(status));
    return std::nullopt;
}

// last_line — the last non-blank line of `text`.
std::string last_line(const std::string& text) {
    std::istringstream in(text);
    std::string line, last;
    while (std::getline(in, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    return last;
}

// shorten — a program's text for a message: cleaned (valid UTF-8, no control character:
// csv.hpp) and cut at a character boundary.
std::string shorten(const std::string& s) { return cut_text(clean_text(s), 200); }

// json_depth — the deepest nesting of arrays and objects in `text`, counted outside strings
// (a bracket inside a string is text); the scan stops as soon as it passes `limit`.
int json_depth(const std::string& text, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) break;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return deepest;
}

// read_manifest — a manifest file's text, at most kMaxReplyBytes (a manifest is a few lines;
// a longer file is not one).
std::string read_manifest(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::string text(kMaxReplyBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxReplyBytes)
        throw std::runtime_error("longer than " + std::to_string(kMaxReplyBytes) + " bytes: not a manifest");
    return text;
}

// Manifest — one manifest file to load, and whether it is one of the build's own.
struct Manifest {
    std::string path;
    bool from_build = false;
};

// build_manifest_dir — the folder of the build's manifests: $COOPBENCH_BUILD_BACKENDS when
// set (a driver copied or installed away from its build tree, or a test's own folder), else
// the build's <build>/backends, else none.
std::string build_manifest_dir() {
    if (const char* env = std::getenv("COOPBENCH_BUILD_BACKENDS")) return env;
    return COOPBENCH_EXTERNAL_DIR;
}

// manifests — every manifest file to load, in order: the build's, then $COOPBENCH_BACKENDS.
std::vector<Manifest> manifests() {
    std::vector<Manifest> places;
    if (auto build = build_manifest_dir(); !build.empty()) places.push_back({build, true});
    if (const char* env = std::getenv("COOPBENCH_BACKENDS"))
        for (auto& p : split_list(env, ':')) places.push_back({p, false});
    std::vector<Manifest> files;
    for (auto& p : places) {
        std::error_code ec;
        if (fs::is_directory(p.path, ec)) {
            std::vector<std::string> here;
            for (auto& e : fs::directory_iterator(p.path, ec))
                if (e.path().extension() == ".json") here.push_back(e.path().string());
            std::sort(here.begin(), here.end());
            for (auto& f : here) files.push_back({f, p.from_build});
        } else if (fs::exists(p.path, ec)) {
            files.push_back(p);
        } else if (!p.from_build) {
            std::fprintf(stderr, "coopbench: COOPBENCH_BACKENDS names %s, which does not exist\n", p.path.c_str());
        }
    }
    return files;
}

std::vector<LeftOutBackend>& left_out() {
    static std::vector<LeftOutBackend> v;
    return v;
}

// manifest_name — the "name" a manifest declares, or its file name without .json when it
// declares none that can be read.
std::string manifest_name(const std::string& path) {
    nlohmann::json j;
    try {
        j = parse_program_json(read_manifest(path));
    } catch (const std::exception&) {
    }
    if (j.is_object() && j.contains("name") && j.at("name").is_string()) return j.at("name").get<std::string>();
    return fs::path(path).stem().string();
}

}  // namespace

namespace {

// exec_external — in the forked child: exec the program with the request on stdin (stdout
// already redirected). Never returns (exit 127 when exec fails).
[[noreturn]] void exec_external(const ExternalBackend& b, const Point& point, bool inject_fault) {
    // The request goes through a pipe filled before exec (it is far below the pipe's
    // capacity, so the write cannot block); the program reads it as its stdin.
    const std::string request = external_request(point, inject_fault);
    int in[2];
    if (pipe(in) != 0 || write(in[1], request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
        std::fprintf(stderr, "coopbench: cannot pass the request to %s: %s\n", b.command.front().c_str(),
                     std::strerror(errno));
        _exit(127);
    }
    close(in[1]);
    dup2(in[0], STDIN_FILENO);
    close(in[0]);
    // An I/O workload's program is a server: the load generator runs it and replies for it.
    auto args = serves_io(point.workload) ? io_host_command(b.command) : b.command;
    auto argv = c_argv(args);
    execv(argv[0], argv.data());
    std::fprintf(stderr, "coopbench: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
}

// ProgramRunner — an external backend's fork: its program exec'd in the child process
// (child_process.hpp: so timeout, peak RSS, CPU time and crash reports are the program's
// own), the request on its stdin, the last non-blank line of its stdout the reply.
class ProgramRunner : public PointRunner {
  public:
    explicit ProgramRunner(const ExternalBackend& b) : backend_(b) {}
    Measurement measure(const Point& point, const RunnerOptions& opts) const override {
        Measurement m;
        ReplyReader reply(kMaxReplyBytes);
        auto child = [&](int out) {
            dup2(out, STDOUT_FILENO);
            reap_point_tree();  // returns in the process that execs the program
            exec_external(backend_, point, opts.inject_fault);
        };
        // Only the last non-blank line counts (ReplyReader keeps it); whatever the program
        // printed before is its own.
        auto ignore = [](std::string&&) {};
        // The point's process tree ends with the program (run_child): whatever it left running.
        const ChildRun c = run_child(opts, child, reply, ignore);
        if (!c.error.empty()) {
            m.runs.push_back(Outcome::failed(c.error));
            return m;
        }
        std::string failure;
        if (reply.too_long())
            failure = reply_too_long(reply, "program's");
        else if (reply.has_last() && !c.timed_out && !WIFSIGNALED(c.status))
            m.runs = external_outcomes(reply.last() + "\n", WEXITSTATUS(c.status), point.runs());
        end_fork(m, c, point.runs(), std::move(failure), opts);
        return m;
    }

  private:
    const ExternalBackend& backend_;
};

std::map<std::string, ProgramRunner>& program_runners() {
    static std::map<std::string, ProgramRunner> m;
    return m;
}

}  // namespace

namespace {
// name_word — letters, digits, '-', '_' and '.', not starting with '.' (so no "." or ".."
// and nothing hidden when the word becomes part of a path).
bool name_word(std::string_view w) {
    if (w.empty() || w[0] == '.') return false;
    for (char c : w)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
    return true;
}

// name_problem — why a manifest's `name` cannot name a backend, or nothing: it is typed in
// -b's comma-separated list and begins every point's id (backend/workload/K=v/...), so it is
// a family, or a family and a variant joined by one '/', each a name_word ("a b,c" could
// never be selected; "../x" would climb out of a folder named after it).
std::optional<std::string> name_problem(const std::string& name) {
    const auto slash = name.find('/');
    const bool ok = slash == std::string::npos
                        ? name_word(name)
                        : name_word(std::string_view(name).substr(0, slash)) &&
                              name_word(std::string_view(name).substr(slash + 1));
    if (ok) return std::nullopt;
    return "\"name\" must be a family or family/variant of letters, digits, '-', '_' and '.' (not starting "
           "with '.'), got '" + shorten(name) + "'";
}

// manifest_option — one of a manifest's `options`: {"name", "default", "help", "choices"}.
// The name as a backend's (it is typed as --backend-opt NAME=V); a default, since every
// point records the value each option had (an option without one would leave its rows
// silent about what ran), one of the choices when they are given.
OptionSpec manifest_option(const nlohmann::json& o) {
    OptionSpec spec{o.at("name").get<std::string>(), "", o.value("help", std::string()),
                    o.value("choices", std::vector<std::string>{})};
    if (!name_word(spec.name))
        throw std::runtime_error("option name '" + shorten(spec.name) +
                                 "' must be letters, digits, '-', '_' and '.' (not starting with '.')");
    if (!o.contains("default") || !o.at("default").is_string() || o.at("default").get<std::string>().empty())
        throw std::runtime_error("option '" + spec.name + "' needs a \"default\" (a non-empty string)");
    spec.default_value = o.at("default").get<std::string>();
    if (!spec.choices.empty() &&
        std::find(spec.choices.begin(), spec.choices.end(), spec.default_value) == spec.choices.end())
        throw std::runtime_error("option '" + spec.name + "': default '" + shorten(spec.default_value) +
                                 "' is not one of its choices");
    return spec;
}

// manifest_fields — a manifest's keys into the backend `b` and its registry entry `e`; the
// reason when one is missing or wrong.
std::optional<std::string> manifest_fields(const nlohmann::json& j, const std::string& path, ExternalBackend& b,
                                           BackendEntry& e) {
    try {
        b.name = j.at("name").get<std::string>();
        std::string program = j.at("program").get<std::string>();
        if (program.empty()) return std::string("\"program\" is empty");
        fs::path prog(program);
        if (prog.is_relative()) prog = fs::absolute(fs::path(path).parent_path() / prog);
        b.command.push_back(prog.lexically_normal().string());
        if (j.contains("args"))
            for (auto& a : j.at("args")) b.command.push_back(a.get<std::string>());
        e.description = j.value("description", std::string("external backend"));
        e.preemptive = j.value("preemptive", false);
        e.origin = j.value("source", path) + " (program " + b.command.front() + ")";
        // What the program's channel is (context.json: backend.<name>.channel), when its
        // manifest says; the harness cannot tell from outside.
        if (j.contains("channel") && (!j.at("channel").is_string() || j.at("channel").get<std::string>().empty()))
            return std::string("\"channel\" must be a non-empty string, got ") + shorten(j.at("channel").dump());
        e.channel = j.value("channel", std::string("the program's own"));
        // A program that runs on fewer OS threads than a point asks for (e.g. one): its points
        // run on at most that many processors and are recorded so, as a C++ variant's fixed
        // option max_processors (harness/plan.cpp).
        if (j.contains("max_processors")) {
            const auto& mp = j.at("max_processors");
            if (!mp.is_number_integer() || mp.get<std::int64_t>() < 1 || mp.get<std::int64_t>() > 65536)
                return std::string("\"max_processors\" must be an integer from 1 to 65536, got ") + shorten(mp.dump());
            e.fixed["max_processors"] = std::to_string(mp.get<std::int64_t>());
        }
        if (j.contains("options"))
            for (auto& o : j.at("options")) e.options.push_back(manifest_option(o));
    } catch (const std::exception& ex) {
        return "bad manifest: " + shorten(ex.what());
    }
    if (b.name.empty()) return std::string("\"name\" is empty");
    return name_problem(b.name);
}

// list_answer — what `program --list` says: the workloads it implements (those the harness
// knows get a runner), whether it iterates, its context; the reason when it cannot be used.
std::optional<std::string> list_answer(ExternalBackend& b, BackendEntry& e) {
    std::string out;
    if (auto why = run_list(b.command, out)) return *why;
    try {
        auto l = parse_program_json(last_line(out));
        if (l.value("protocol", 0) != 1) return std::string("--list speaks protocol ") + l.value("protocol", nlohmann::json(0)).dump() + ", not 1";
        const auto& known = Registry::instance().workloads();
        for (auto& w : l.at("workloads")) {
            auto name = w.get<std::string>();
            b.listed.push_back(name);
            if (known.count(name)) e.runners[name] = &external_runner_stub;
        }
        b.iterates = l.value("iterations", false);
        if (l.contains("context"))
            for (auto& [k, v] : l.at("context").items()) b.context[k] = v.is_string() ? v.get<std::string>() : v.dump();
    } catch (const std::exception& ex) {
        return "unreadable --list answer: " + shorten(ex.what());
    }
    return std::nullopt;
}
}  // namespace

std::optional<std::string> load_manifest(const std::string& path) {
    nlohmann::json j;
    std::string text;
    try {
        text = read_manifest(path);
    } catch (const std::exception& e) {
        return e.what();
    }
    try {
        j = parse_program_json(text);
    } catch (const std::exception& e) {
        return "not JSON: " + shorten(e.what());
    }
    ExternalBackend b;
    BackendEntry e;
    if (auto why = manifest_fields(j, path, b, e)) return why;
    if (Registry::instance().backend(b.name)) return "a backend called " + b.name + " is already registered";
    if (access(b.command.front().c_str(), X_OK) != 0)
        return "program " + b.command.front() + " is not executable (" + std::strerror(errno) + ")";
    std::error_code ec;  // a folder passes X_OK (it can be entered), yet cannot be run
    if (fs::is_directory(b.command.front(), ec))
        return "program " + b.command.front() + " is not executable (it is a folder)";
    if (auto why = list_answer(b, e)) return why;
    e.name = b.name;
    e.family = b.name.substr(0, b.name.find('/'));
    b.manifest = path;
    Registry::instance().add_backend(std::move(e));
    const std::string name = b.name;
    const ExternalBackend& kept = externals().emplace(name, std::move(b)).first->second;
    program_runners().try_emplace(name, kept);
    return std::nullopt;
}

void load_external_backends() {
    static std::once_flag once;
    std::call_once(once, [] {
        // The C++ backends' workloads register at static initialisation; external ones
        // can only run workloads the harness knows.
        // A manifest named by $COOPBENCH_BACKENDS is the user's: one that cannot be used is
        // said at once. The build's own manifests are written at configure time, before their
        // programs are built (a build of some targets only, e.g. the tests, leaves them
        // unbuilt): saying so on every command would add a line to every message, bad input's
        // one line included. They are said where they matter: `coopbench list`, a sweep of
        // every backend, and `-b NAME` naming one (harness/plan.cpp).
        for (auto& m : manifests())
            if (auto why = load_manifest(m.path)) {
                if (m.from_build)
                    left_out().push_back({manifest_name(m.path), m.path, *why});
                else
                    std::fprintf(stderr, "coopbench: external backend %s left out: %s\n", m.path.c_str(), why->c_str());
            }
    });
}

const std::vector<LeftOutBackend>& left_out_backends() { return left_out(); }

const LeftOutBackend* left_out_backend(const std::string& name) {
    for (auto& l : left_out())
        if (l.name == name) return &l;
    return nullptr;
}

const ExternalBackend* external_backend(const std::string& name) {
    auto it = externals().find(name);
    return it == externals().end() ? nullptr : &it->second;
}

std::string external_request(const Point& point, bool inject_fault) {
    nlohmann::json j;
    j["protocol"] = 1;
    j["backend"] = point.backend;
    j["workload"] = point.workload;
    j["params"] = point.params;
    j["processors"] = point.options.processors;
    j["pin"] = point.options.pin;
    j["stack_size"] = point.options.stack_size;
    j["options"] = point.options.extra;
    j["inject_fault"] = inject_fault;
    j["warmup"] = point.warmup;
    j["iterations"] = point.iterations;
    return j.dump() + "\n";
}

nlohmann::json parse_program_json(const std::string& text) {
    if (json_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
        throw std::runtime_error("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    // nlohmann's parser stops at a NUL as at the end of the text: what follows would be
    // ignored unseen ({"status":"ok",...}\0anything), so a NUL anywhere makes it unreadable.
    if (const auto nul = text.find('\0'); nul != std::string::npos)
        throw std::runtime_error("a NUL byte at offset " + std::to_string(nul));
    // A key given twice in one object says two things (RFC 8259 leaves which one counts to the
    // reader; nlohmann keeps the last): refused, as Python's object_pairs_hook can. The keys
    // of each open object, by depth.
    std::vector<std::set<std::string>> keys;
    const nlohmann::json::parser_callback_t no_duplicates = [&](int, nlohmann::json::parse_event_t event,
                                                                nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        if (event == E::object_start) keys.emplace_back();
        else if (event == E::object_end && !keys.empty()) keys.pop_back();
        else if (event == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
            throw std::runtime_error("the key \"" + parsed.get<std::string>() + "\" is given twice in one object");
        return true;
    };
    return nlohmann::json::parse(text, no_duplicates);
}

namespace {
// refused_outcome — a reply {"status": "refused", "reason": ...}: the program knew before the
// run that the point cannot fit (a limit of the system), which is recorded as a refusal
// (kRefusalPrefix, harness/runner.hpp), as a C++ backend's capacity check is.
Outcome refused_outcome(const nlohmann::json& j) {
    std::string why = j.value("reason", std::string("the program refused the point without a reason"));
    if (why.rfind(kRefusalPrefix, 0) != 0) why = std::string(kRefusalPrefix) + why;
    return Outcome::failed(why);
}
}  // namespace

Outcome external_outcome(const std::string& out, int exit_code) {
    const std::string line = last_line(out);
    nlohmann::json j;
    try {
        j = parse_program_json(line);
        if (!j.is_object()) throw std::runtime_error("not a JSON object");
    } catch (const std::exception& e) {
        return Outcome::failed("unreadable result from the backend's program: " + shorten(e.what()) + "; its last line: " +
                               shorten(line));
    }
    Outcome o;
    try {
        const std::string status = j.at("status").get<std::string>();
        if (status == "failed" || status == "unsupported") {
            o = Outcome::failed((status == "unsupported" ? "unsupported: " : "") +
                                j.value("reason", std::string("the program reported a failure without a reason")));
            return o;
        }
        if (status == "refused") return refused_outcome(j);
        if (status != "ok") return Outcome::failed("the program reported an unknown status '" + shorten(status) + "'");
        o.seconds = j.at("seconds").get<double>();
        o.value = j.at("value").get<double>();
        // The program's own CPU time of the run (all its threads: getrusage or
        // CLOCK_PROCESS_CPUTIME_ID around it), optional: the child's rusage spans every run.
        if (j.contains("cpu_seconds")) {
            const double c = j.at("cpu_seconds").get<double>();
            if (!std::isfinite(c) || c < 0) return Outcome::failed("the program reported a negative CPU time");
            o.cpu_seconds = c;
        }
        if (j.contains("counters"))
            for (auto& [k, v] : j.at("counters").items()) {
                // The driver's own values in benchmark.json's counters: a program's counter of
                // that name would replace them there (the noise flag among them).
                for (const char* own : {"value", "noisy", "peak_rss_kib", "cpu_seconds"})
                    if (k == own)
                        return Outcome::failed("the program's counter \"" + k +
                                               "\" has a name the driver reserves (value, noisy, peak_rss_kib, "
                                               "cpu_seconds): rename it");
                if (v.is_number()) o.counters[k] = v.get<double>();
            }
        const std::string check = j.at("check").get<std::string>();
        if (check != "passed") {
            o.ok = false;
            o.reason = check.rfind("self-check failed", 0) == 0 ? check : "self-check failed: " + check;
            return o;
        }
    } catch (const std::exception& e) {
        return Outcome::failed("incomplete result from the backend's program: " + shorten(e.what()));
    }
    if (!std::isfinite(o.seconds) || o.seconds < 0) return Outcome::failed("the program reported a negative time");
    if (exit_code != 0)
        return Outcome::failed("the program exited with status " + std::to_string(exit_code) + " after its result");
    return o;
}

std::vector<Outcome> external_outcomes(const std::string& out, int exit_code, int expected_runs) {
    nlohmann::json j;
    try {
        j = parse_program_json(last_line(out));
    } catch (const std::exception&) {
        return {external_outcome(out, exit_code)};  // says why it is unreadable
    }
    if (!j.is_object() || !j.contains("runs")) return {external_outcome(out, exit_code)};
    std::vector<Outcome> runs;
    if (!j.at("runs").is_array()) return {Outcome::failed("the program's \"runs\" is not an array")};
    // More runs than were asked cannot be told apart (which were warm-up, which measured?):
    // none of them is kept. Fewer are kept, followed by the failure, as a fork that ended early.
    if (j.at("runs").size() > static_cast<std::size_t>(std::max(expected_runs, 0)))
        return {Outcome::failed("the program replied " + std::to_string(j.at("runs").size()) + " runs, " +
                                std::to_string(expected_runs) + " were requested")};
    for (auto& r : j.at("runs")) {
        runs.push_back(external_outcome(r.dump() + "\n", exit_code));
        if (!runs.back().ok) return runs;
    }
    if (static_cast<int>(runs.size()) != expected_runs)
        runs.push_back(Outcome::failed("the program replied " + std::to_string(runs.size()) + " runs, " +
                                       std::to_string(expected_runs) + " were requested"));
    return runs;
}

const PointRunner* program_runner(const std::string& backend) {
    auto it = program_runners().find(backend);
    return it == program_runners().end() ? nullptr : &it->second;
}

void add_external_context(nlohmann::json& context, const std::vector<Point>& points) {
    for (auto& p : points)
        if (auto* b = external_backend(p.backend)) {
            const std::string prefix = "backend." + b->name + ".";
            if (context.contains(prefix + "program")) continue;
            context[prefix + "program"] = b->command.front();
            for (auto& [k, v] : b->context) context[prefix + k] = v;
        }
}

// The compile facts of this binary and of the clang-compiled implicit backends (when built):
// build_facts.hpp, included above.

void add_build_context(nlohmann::json& context, const std::vector<Point>& points) {
    const std::string ipo = std::string("IPO/LTO ") + COOPBENCH_IPO;
    const std::string cxx = std::string(COOPBENCH_COMPILER) + "; " + COOPBENCH_BUILD_TYPE + ": " + COOPBENCH_BUILD_FLAGS + "; " + ipo;
    for (auto& p : points) {
        const std::string key = "backend." + p.backend + ".build";
        if (context.contains(key)) continue;
        if (auto* b = external_backend(p.backend)) {
            auto it = b->context.find("build");
            context[key] = it != b->context.end() ? it->second : std::string("not reported by the program's --list");
        } else if (const BackendEntry* e = Registry::instance().backend(p.backend)) {
#ifdef COOPBENCH_IMPLICIT_BUILD
            if (e->origin.find("native_implicit/") != std::string::npos) {
                context[key] = std::string(COOPBENCH_IMPLICIT_BUILD) + "; " + ipo;
                continue;
            }
#endif
            (void)e;
            context[key] = cxx;
        }
    }
}

}  // namespace coopbench
