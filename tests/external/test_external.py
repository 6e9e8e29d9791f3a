"""test_external.py COOPBENCH — external backends (harness/external.hpp) through the real
binary: the protocol's outcomes (a correct answer, a crash, a hang, garbage, a failed
self-check, ...) each become the right point status and reason, nothing is lost from the
results, unimplemented workloads are skipped, broken manifests are left out with one line,
and the documented example (docs/examples/external/) works."""
import csv
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BIN = None


# The exit code of a run that ended with failed points (README, "Exit codes").
POINTS_FAILED = 3


def run(args, backends, check=True, env_extra=None):
    """check: True expects exit code 0, an int that code, False any."""
    env = dict(os.environ, COOPBENCH_BACKENDS=":".join(str(b) for b in backends))
    env.update(env_extra or {})
    p = subprocess.run([BIN] + args, env=env, capture_output=True, text=True, timeout=300)
    want = 0 if check is True else check
    if check is not False and p.returncode != want:
        raise AssertionError(f"coopbench {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
    return p


def rows(folder):
    with open(pathlib.Path(folder) / "results.csv") as f:
        return list(csv.DictReader(f))


class Protocol(unittest.TestCase):
    def test_every_outcome_becomes_the_right_status_and_reason(self):
        marker = f"{300 + random.random():.6f}"
        modes = ["good", "crash", "hang", "garbage", "badcheck", "failed", "exit3", "silent", "panic"]
        with tempfile.TemporaryDirectory() as d:
            out = pathlib.Path(d) / "run"
            run(["run", "-b", ",".join("fake-" + m for m in modes), "-w", "create,switch,lock-local",
                 "-p", "N=5", "-p", "T=2", "-p", "K=10", "-P", "2", "--timeout", "3", "-o", str(out), "-q"],
                [HERE / "backends"], check=POINTS_FAILED, env_extra={"FAKE_SLEEP": marker})
            got = rows(out)
            # Every (backend, create/switch) pair has its row; lock-local is not implemented
            # by the program, so it is skipped: no row at all.
            self.assertEqual(sorted((r["backend"], r["workload"]) for r in got),
                             sorted((f"fake-{m}", w) for m in modes for w in ["create", "switch"]))
            by = {(r["backend"], r["workload"]): r for r in got}
            good = by[("fake-good", "create")]
            self.assertEqual(good["status"], "ok", good["reason"])
            self.assertEqual(float(good["value"]), 1000.0)
            self.assertAlmostEqual(float(good["seconds"]), 0.005)
            counters = json.loads(good["counters"])
            self.assertEqual(counters["processors_seen"], 2.0)  # the point's processors reached it
            self.assertNotEqual(good["peak_rss_kib"], "")
            self.assertNotEqual(good["cpu_seconds"], "")
            expected = {
                "crash": "crashed: SIGSEGV",
                "hang": "timeout after 3 s",
                "garbage": "unreadable result from the backend's program",
                "badcheck": "self-check failed: threads that ran = 7, expected 8",
                "failed": "fake refused the point",
                "exit3": "the program exited with status 3 after its result",
                "silent": "exited with status 0 without a result",
                "panic": "exited with status 2 without a result; panic: fake ran out of patience",
            }
            for mode, reason in expected.items():
                for w in ["create", "switch"]:
                    r = by[(f"fake-{mode}", w)]
                    self.assertEqual(r["status"], "failed", f"{mode}/{w}")
                    self.assertIn(reason, r["reason"], f"{mode}/{w}")
            # The measured value of a failed self-check is kept, as for C++ workloads.
            self.assertEqual(json.loads(by[("fake-badcheck", "create")]["counters"])["processors_seen"], 2.0)
            # points.jsonl has the same points.
            lines = (out / "points.jsonl").read_text().splitlines()
            self.assertEqual(len(lines), len(got))
            # --list's context is recorded.
            ctx = json.loads((out / "context.json").read_text())
            self.assertEqual(ctx["backend.fake-good.fake_mode"], "good")
        # The hanging program's own child was killed with it (its process group).
        time.sleep(0.2)
        left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
        self.assertEqual(left.stdout.strip(), "", "the hanging program's child survived the timeout")

    def test_isolation_none_still_runs_the_program_in_its_own_process(self):
        with tempfile.TemporaryDirectory() as d:
            run(["run", "-b", "fake-good", "-w", "create", "-p", "N=3", "--isolation", "none", "-o", d, "-q"],
                [HERE / "backends"])
            (r,) = rows(d)
            self.assertEqual(r["status"], "ok", r["reason"])
            self.assertAlmostEqual(float(r["seconds"]), 0.003)

    def test_inject_fault_reaches_the_program(self):
        with tempfile.TemporaryDirectory() as d:
            run(["run", "-b", "fake-good", "-w", "create", "-p", "N=3", "--inject-fault", "-o", d, "-q"],
                [HERE / "backends"], check=POINTS_FAILED)
            (r,) = rows(d)
            self.assertEqual(r["status"], "failed")
            self.assertIn("self-check failed: threads that ran = 2, expected 3", r["reason"])

    def test_list_shows_origin_and_implemented_workloads_and_leaves_broken_manifests_out(self):
        p = run(["list", "--json"], [HERE / "backends", HERE / "broken"])
        listing = {b["name"]: b for b in json.loads(p.stdout)["backends"]}
        good = listing["fake-good"]
        self.assertEqual(sorted(good["workloads"]), ["create", "switch"])  # unknown names dropped
        self.assertIn("backend", good["origin"])
        self.assertIn("fake_backend.py", good["origin"])
        self.assertTrue(good["external"])
        self.assertFalse(listing["pthreads"]["external"])
        self.assertNotIn("fake-missing", listing)
        left_out = [l for l in p.stderr.splitlines() if "left out" in l]
        self.assertEqual(len(left_out), 2, p.stderr)
        self.assertTrue(any("missing.json" in l and "not executable" in l for l in left_out), p.stderr)
        self.assertTrue(any("notjson.json" in l and "not JSON" in l for l in left_out), p.stderr)

    def test_a_name_taken_by_a_cpp_backend_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            m = pathlib.Path(d) / "dup.json"
            m.write_text(json.dumps({"name": "pthreads", "program": str(HERE / "fake_backend.py"), "args": ["good"]}))
            p = run(["list"], [m])
            self.assertIn("already registered", p.stderr)


def manifest(folder, name, mode, **extra):
    m = pathlib.Path(folder) / f"{name}.json"
    m.write_text(json.dumps(dict({"name": name, "program": str(HERE / "fake_backend.py"), "args": [mode]}, **extra)))
    return m


class FirstClass(unittest.TestCase):
    """What a backend author in another language meets: a flooding program, a one-thread
    program, a workload the program does not implement, and `coopbench list`."""

    def test_a_program_flooding_its_output_fails_its_point_and_the_driver_stays_small(self):
        # The driver in a Python child of its own, so its peak RSS (RUSAGE_CHILDREN of that
        # child: the driver and the program) is this run's alone.
        with tempfile.TemporaryDirectory() as d:
            m = manifest(d, "fake-flood", "flood")
            script = ("import resource, subprocess, sys\n"
                      "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
                      "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
            env = dict(os.environ, COOPBENCH_BACKENDS=str(m), FAKE_FLOOD_MIB="256")
            p = subprocess.run([sys.executable, "-c", script, BIN, "run", "-b", "fake-flood", "-w", "create", "-p", "N=3",
                                "-o", d + "/out", "-q"], env=env, capture_output=True, text=True, timeout=300)
            rc, peak_kib = (int(x) for x in p.stdout.split())
            self.assertEqual(rc, POINTS_FAILED, p.stderr)
            (r,) = rows(d + "/out")
            self.assertEqual(r["status"], "failed")
            self.assertIn("reply longer than 1048576 bytes", r["reason"])
            # 256 MiB went through the pipe; the driver kept at most ~1 MiB of it.
            self.assertLess(peak_kib, 128 * 1024, f"peak RSS {peak_kib} KiB")

    def test_a_manifest_declares_max_processors(self):
        with tempfile.TemporaryDirectory() as d:
            m = manifest(d, "fake-one", "good", max_processors=1)
            p = run(["run", "--dry-run", "-b", "fake-one", "-w", "create", "-p", "N=3", "-P", "1,2,4"], [m])
            self.assertEqual(p.stdout.splitlines()[0].split()[0], "fake-one/create/N=3/P=1", p.stdout)
            self.assertIn("1 points", p.stdout)
            run(["run", "-b", "fake-one", "-w", "create", "-p", "N=3", "-P", "2", "-o", d + "/out", "-q"], [m])
            (r,) = rows(d + "/out")
            self.assertEqual(r["status"], "ok", r["reason"])
            self.assertEqual(json.loads(r["counters"])["processors_seen"], 1.0)
            bad = manifest(d, "fake-zero", "good", max_processors=0)
            p = run(["list"], [bad])
            self.assertIn("max_processors", p.stderr)
            self.assertIn("left out", p.stderr)

    def test_a_manifest_declares_its_channel(self):
        # context.json records each backend's channel: the manifest's "channel", else "the
        # program's own" (the driver cannot tell from outside).
        with tempfile.TemporaryDirectory() as d:
            said = manifest(d, "fake-chan", "good", channel="a test channel")
            plain = manifest(d, "fake-plain", "good")
            run(["run", "-b", "fake-chan,fake-plain", "-w", "create", "-p", "N=3", "-o", d + "/out", "-q"], [said, plain])
            ctx = json.loads((pathlib.Path(d) / "out" / "context.json").read_text())
            self.assertEqual(ctx["backend.fake-chan.channel"], "a test channel")
            self.assertEqual(ctx["backend.fake-plain.channel"], "the program's own")
            bad = manifest(d, "fake-badchan", "good", channel=3)
            p = run(["list"], [bad])
            self.assertIn("\"channel\" must be a non-empty string", p.stderr)
            self.assertIn("left out", p.stderr)

    def test_context_records_how_every_backend_was_built(self):
        # backend.<name>.build for every backend of the sweep: an in-process backend's
        # compiler, build type, flags and IPO; a program's the "build" of its --list context,
        # else a note that it reported none.
        with tempfile.TemporaryDirectory() as d:
            built = manifest(d, "fake-built", "built")
            plain = manifest(d, "fake-plain", "good")
            run(["run", "-b", "native,pthreads,fake-built,fake-plain", "-w", "create", "-p", "N=3", "-o", d + "/out",
                 "-q"], [built, plain])
            ctx = json.loads((pathlib.Path(d) / "out" / "context.json").read_text())
            backends = {r["backend"] for r in rows(d + "/out")}
            self.assertEqual(backends, {"native", "pthreads", "fake-built", "fake-plain"})
            for b in backends:
                self.assertTrue(ctx.get(f"backend.{b}.build"), f"no backend.{b}.build in context.json")
            for b in ("native", "pthreads"):
                build = ctx[f"backend.{b}.build"]
                self.assertIn(ctx["compiler"], build)
                self.assertIn(ctx["build_flags"].strip(), build)
                self.assertRegex(build, r"IPO/LTO (on|off)")
            self.assertEqual(ctx["backend.fake-built.build"], "fakecc 1.0 -O2 -flto")
            self.assertEqual(ctx["backend.fake-plain.build"], "not reported by the program's --list")

    def test_a_workload_the_program_does_not_list_is_named_as_the_reason(self):
        p = run(["run", "--dry-run", "-b", "fake-good", "-w", "lock-local"], [HERE / "backends"], check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("fake-good's program does not implement lock-local", p.stderr)
        self.assertIn("its --list names create, switch, no-such-workload", p.stderr)
        self.assertNotIn("preemptive", p.stderr)

    def test_a_cpp_backend_that_does_not_run_a_workload_names_those_that_do(self):
        # Before: "some workloads need a preemptive backend" for every cooperative backend,
        # also where the workload runs on coop only (Quirk's units: pthreads does not run it
        # either), and never which backend would do.
        p = run(["run", "--dry-run", "-b", "pthreads", "-w", "fib"], [], check=2)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn("pthreads does not run fib (fib runs on native", p.stderr)
        p = run(["run", "--dry-run", "-b", "native", "-w", "abortable-lock"], [], check=2)
        self.assertRegex(p.stderr, r"native does not run abortable-lock \(abortable-lock runs on [^)]*pthreads")
        self.assertNotIn("preemptive", p.stderr)

    def test_list_says_which_workloads_a_program_implements(self):
        p = run(["list"], [HERE / "backends" / "good.json"])
        self.assertIn("implements: create, switch", p.stdout)
        self.assertIn("left out: no-such-workload", p.stdout)


class PythonGenerators(unittest.TestCase):
    """tests/external/pygen: a second backend in another language, written from the protocol
    section of docs/adding-a-backend.md alone (generators on one OS thread, iterations, the
    {"runs": [...]} reply, max_processors), through the tiny plan."""

    MANIFEST = HERE / "pygen" / "backend.json"

    def test_the_tiny_plan_passes_every_self_check_on_one_processor(self):
        with tempfile.TemporaryDirectory() as d:
            run(["run", "-b", "pygen", "--plan", "tiny", "-o", d, "-q"], [self.MANIFEST])
            got = rows(d)
            self.assertEqual({r["workload"] for r in got}, {"create", "switch", "lock-local", "lock-global", "tokenring"})
            self.assertTrue(all(r["status"] == "ok" for r in got), [r["reason"] for r in got if r["status"] != "ok"])
            self.assertEqual({r["processors"] for r in got}, {"1"})  # max_processors 1
            # Warm-up and measured iterations in one process: iteration i is the process's run i.
            for r in got:
                self.assertEqual(json.loads(r["counters"])["process_run"], float(r["iteration"]), r["point"])
            self.assertIn("tests/external/pygen/pygen.py", json.loads(run(["list", "--json"], [self.MANIFEST]).stdout)
                          and [b["origin"] for b in json.loads(run(["list", "--json"], [self.MANIFEST]).stdout)["backends"]
                               if b["name"] == "pygen"][0])

    def test_every_self_check_catches_an_injected_fault(self):
        with tempfile.TemporaryDirectory() as d:
            run(["run", "-b", "pygen", "--plan", "tiny", "--inject-fault", "-o", d, "-q"], [self.MANIFEST], check=POINTS_FAILED)
            got = rows(d)
            self.assertTrue(got)
            for r in got:
                self.assertEqual(r["status"], "failed", r["point"])
                self.assertIn("self-check failed", r["reason"], r["point"])


class DocumentedExample(unittest.TestCase):
    """docs/adding-a-backend.md, "A backend in another language": the example as printed."""

    def test_the_document_prints_the_example_as_it_is(self):
        doc = (ROOT / "docs" / "adding-a-backend.md").read_text()
        code = (ROOT / "docs" / "examples" / "external" / "pythreads.py").read_text()
        manifest = (ROOT / "docs" / "examples" / "external" / "backend.json").read_text().strip()
        self.assertIn("```python\n" + code + "```", doc)
        self.assertIn("```json\n" + manifest + "\n```", doc)

    def test_the_example_runs_and_its_self_check_catches_a_fault(self):
        example = ROOT / "docs" / "examples" / "external" / "backend.json"
        with tempfile.TemporaryDirectory() as d:
            run(["run", "-b", "pythreads", "--plan", "tiny", "-o", d + "/ok", "-q"], [example])
            got = rows(d + "/ok")
            self.assertEqual({r["workload"] for r in got}, {"create"})  # the only one it implements
            self.assertTrue(all(r["status"] == "ok" for r in got), [r["reason"] for r in got])
            run(["run", "-b", "pythreads", "--plan", "tiny", "--inject-fault", "-o", d + "/fault", "-q"], [example],
                check=POINTS_FAILED)
            self.assertTrue(all(r["status"] == "failed" and "self-check failed" in r["reason"] for r in rows(d + "/fault")))


class Hostile(unittest.TestCase):
    """Programs that misbehave on purpose (../shared probes of the harness review): nothing they
    print crashes the driver, and nothing they leave running outlives their point."""

    def test_a_deeply_nested_list_answer_leaves_out_only_its_backend(self):
        # 100,000 levels (about 200 KB, inside the 1 MiB bound): printing or copying it
        # recursed until the driver's stack overflowed (SIGSEGV), in `list` and in a run of
        # another backend alike.
        with tempfile.TemporaryDirectory() as d:
            m = manifest(d, "fake-deep-list", "deep-list")
            p = run(["list"], [m])
            self.assertIn("fake-deep-list.json left out: unreadable --list answer: nested deeper than 64 levels",
                      p.stderr)
            run(["run", "-b", "pthreads", "-w", "create", "-p", "N=3", "-P", "1", "-o", d + "/out", "-q"], [m])
            self.assertEqual({r["status"] for r in rows(d + "/out")}, {"ok"})

    def test_a_deeply_nested_reply_fails_its_point(self):
        with tempfile.TemporaryDirectory() as d:
            m = manifest(d, "fake-deep-reply", "deep-reply")
            run(["run", "-b", "fake-deep-reply", "-w", "create", "-p", "N=3", "-o", d + "/out", "-q"], [m],
                check=POINTS_FAILED)
            (r,) = rows(d + "/out")
            self.assertEqual(r["status"], "failed")
            self.assertIn("nested deeper than 64 levels", r["reason"])


def alive(pid):
    """A process that runs (a zombie has ended: it only waits to be reaped)."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def children(pid):
    out = []
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                out.append(int(d.name))
    return out


def wait_for(predicate, seconds=60):
    """A watchdog: predicate() within `seconds`, else False (the test fails, it does not hang)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


class ProcessTree(unittest.TestCase):
    """A point's whole process tree (its program, a child in its group, a setsid grandchild)
    ends with the point, whatever ends it."""

    def tree_run(self, d, mode, extra=()):
        m = manifest(d, f"fake-{mode}", mode)
        pids = pathlib.Path(d) / "pids"
        env = dict(os.environ, COOPBENCH_BACKENDS=str(m), FAKE_PIDS=str(pids), FAKE_SLEEP="300")
        args = [BIN, "run", "-b", f"fake-{mode}", "-w", "create", "-p", "N=3", "-o", d + "/out", "-q"] + list(extra)
        return env, args, pids

    def noted(self, pids):
        return [int(x) for x in pids.read_text().split()] if pids.exists() else []

    def test_a_program_that_replies_and_exits_is_not_held_by_what_it_left(self):
        # Before: the driver read stdout to EOF, which the descendants held: the point was
        # recorded as a timeout, and the setsid grandchild outlived the sweep.
        with tempfile.TemporaryDirectory() as d:
            env, args, pids = self.tree_run(d, "grandchild", ["--timeout", "60"])
            p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            (r,) = rows(d + "/out")
            self.assertEqual(r["status"], "ok", r["reason"])
            self.assertEqual(len(self.noted(pids)), 3)
            self.assertEqual([q for q in self.noted(pids) if alive(q)], [])

    def test_a_timeout_ends_the_whole_tree(self):
        with tempfile.TemporaryDirectory() as d:
            env, args, pids = self.tree_run(d, "tree", ["--timeout", "2"])
            p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, POINTS_FAILED, p.stderr)
            (r,) = rows(d + "/out")
            self.assertIn("timeout after 2 s", r["reason"])
            self.assertEqual(len(self.noted(pids)), 3)
            self.assertEqual([q for q in self.noted(pids) if alive(q)], [])

    def killed_mid_point(self, sig, whom, rc):
        """`whom`: "driver" (the process measuring) or "supervisor" (the pid the shell knows)."""
        with tempfile.TemporaryDirectory() as d:
            env, args, pids = self.tree_run(d, "tree", ["--timeout", "300"])
            p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                self.assertTrue(wait_for(lambda: len(self.noted(pids)) == 3), "the tree never started")
                target = p.pid if whom == "supervisor" else children(p.pid)[0]
                os.kill(target, sig)
                p.wait(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                err = p.stderr.read()
                p.stderr.close()
            self.assertEqual(p.returncode, -rc, err)
            left = lambda: [q for q in self.noted(pids) if alive(q)]
            self.assertTrue(wait_for(lambda: not left(), 20), f"left running: {left()}")
            # Nothing of the killed point was recorded: --resume measures it again.
            self.assertFalse((pathlib.Path(d) / "out" / "results.csv").exists() and rows(d + "/out"))

    def test_sigint_of_the_driver_ends_the_tree(self):
        self.killed_mid_point(signal.SIGINT, "supervisor", signal.SIGINT)

    def test_sigterm_of_the_driver_ends_the_tree(self):
        self.killed_mid_point(signal.SIGTERM, "supervisor", signal.SIGTERM)

    def test_kill_9_of_the_driver_ends_the_tree(self):
        self.killed_mid_point(signal.SIGKILL, "driver", signal.SIGKILL)

    def test_kill_9_of_the_supervisor_ends_the_tree(self):
        self.killed_mid_point(signal.SIGKILL, "supervisor", signal.SIGKILL)


class Refused(unittest.TestCase):
    """A program may reply "refused": a limit of the system it knows before the run (memory, a
    thread count) says the point cannot fit. That is a result (status refused, with the
    reason), not a failure: the exit code stays 0, and --resume counts the fork as done."""

    def test_a_refused_reply_is_a_refusal_not_a_failure(self):
        with tempfile.TemporaryDirectory() as d:
            m = manifest(d, "fake-refused", "refused")
            p = run(["run", "-b", "fake-refused", "-w", "create", "-p", "N=3", "-o", d + "/out"], [m],
                    env_extra={"FAKE_REASON": "fake: 3 threads need 1 TiB, 2 GiB available"})
            (r,) = rows(d + "/out")
            self.assertEqual(r["status"], "refused", r["reason"])
            self.assertEqual(r["reason"], "system limit: fake: 3 threads need 1 TiB, 2 GiB available")
            self.assertIn("REFUSED: system limit: fake: 3 threads", p.stdout)
            self.assertIn("1 refused", p.stderr)
            run(["run", "--resume", d + "/out", "-q"], [m])
            self.assertEqual(len(rows(d + "/out")), 1)  # not measured again

    def test_a_refusal_without_a_reason_and_in_a_runs_list(self):
        with tempfile.TemporaryDirectory() as d:
            m = manifest(d, "fake-refused", "refused")
            run(["run", "-b", "fake-refused", "-w", "create", "-p", "N=3", "-o", d + "/a", "-q"], [m])
            (r,) = rows(d + "/a")
            self.assertEqual((r["status"], r["reason"]),
                             ("refused", "system limit: the program refused the point without a reason"))
            m = manifest(d, "fake-it-refused", "it-refused")
            run(["run", "-b", "fake-it-refused", "-w", "create", "-p", "N=3", "-W", "1", "-I", "2", "-o", d + "/b",
                 "-q"], [m])
            (r,) = rows(d + "/b")
            self.assertEqual((r["status"], r["reason"]), ("refused", "system limit: 3 threads do not fit"))


class Manifests(unittest.TestCase):
    """A manifest whose name could never be selected or would climb out of a folder, or whose
    option has no default, is left out with its reason (before: registered silently)."""

    def left_out(self, name, **extra):
        with tempfile.TemporaryDirectory() as d:
            m = pathlib.Path(d) / "m.json"
            m.write_text(json.dumps(dict({"name": name, "program": str(HERE / "fake_backend.py"), "args": ["good"]},
                                         **extra)))
            p = run(["list", "--json"], [m])
            self.assertNotIn(name, {b["name"] for b in json.loads(p.stdout)["backends"]}, p.stderr)
            (line,) = [l for l in p.stderr.splitlines() if "left out" in l]
            return line

    def test_a_name_that_cannot_be_typed_or_climbs_out_is_left_out(self):
        for name in ["a b,c", "../../x", "x/../y", ".hidden", "a/b/c", "a,b", "fam/", "/x"]:
            with self.subTest(name=name):
                self.assertIn('"name" must be a family or family/variant of letters', self.left_out(name))
        # What the C++ backends' names look like is fine.
        with tempfile.TemporaryDirectory() as d:
            m = pathlib.Path(d) / "ok.json"
            m.write_text(json.dumps({"name": "fake-ok.v2/round_robin-1", "program": str(HERE / "fake_backend.py"),
                                     "args": ["good"]}))
            p = run(["list", "--json"], [m])
            self.assertIn("fake-ok.v2/round_robin-1", {b["name"] for b in json.loads(p.stdout)["backends"]}, p.stderr)

    def test_a_folder_as_program_is_not_executable(self):
        # A folder passes the executable check (X_OK: it can be entered); before, --list then
        # failed with "cannot run DIR: Permission denied" and a second line.
        with tempfile.TemporaryDirectory() as d:
            line = self.left_out("fake-folder", program=d)
            self.assertIn(f"program {d} is not executable (it is a folder)", line)

    def test_an_option_needs_a_default_a_name_and_a_default_among_its_choices(self):
        self.assertIn("option 'x' needs a \"default\"", self.left_out("fake-o1", options=[{"name": "x"}]))
        self.assertIn("option 'x' needs a \"default\"", self.left_out("fake-o2", options=[{"name": "x", "default": ""}]))
        self.assertIn("option name 'a=b' must be", self.left_out("fake-o3", options=[{"name": "a=b", "default": "1"}]))
        self.assertIn("default 'c' is not one of its choices",
                      self.left_out("fake-o4", options=[{"name": "x", "default": "c", "choices": ["a", "b"]}]))


class WhatAFolderHolds(unittest.TestCase):
    def one_row(self, mode, extra=()):
        with tempfile.TemporaryDirectory() as d:
            m = manifest(d, f"fake-{mode}", mode)
            run(["run", "-b", f"fake-{mode}", "-w", "create", "-p", "N=3", "-o", d + "/out", "-q"] + list(extra), [m],
                check=POINTS_FAILED)
            got = rows(d + "/out")
            self.assertEqual(len(got), 1, [r["status"] for r in got])
            self.assertEqual(got[0]["status"], "failed")
            return got[0]["reason"]

    def test_more_runs_than_asked_writes_none_of_them(self):
        # Before: the point failed, yet all 50 runs were written as ok, measured rows.
        self.assertIn("the program replied 50 runs, 3 were requested", self.one_row("it-many", ["-W", "0", "-I", "3"]))

    def test_a_value_or_time_that_cannot_be_is_a_failed_point(self):
        self.assertIn("implausible result: value = -5", self.one_row("value-neg"))
        self.assertIn("implausible result: seconds = 0 ", self.one_row("seconds-zero"))
        self.assertIn("time", self.one_row("seconds-neg"))


if __name__ == "__main__":
    BIN = sys.argv[1]
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[2:])
