"""test_wrk.py BUILD_DIR — the http-hello servers (workloads/io/http.hpp) loaded by a second,
real HTTP client: Debian's wrk 4.1 (scripts/install-deps.sh's test packages). Every external
program of this build that lists http-hello (the epoll ceiling always; Go, tokio, Asio where
they are built) is started as the serving protocol says (docs/adding-a-backend.md, "Serving
an I/O workload": the request on stdin, {"listening": PORT} on stdout, the end of stdin as
the cue to exit) and loaded by `wrk -t1 -c4 -d1s`, keep-alive, then again with 16 requests
pipelined in each write (wrk's scripts/pipeline.lua): wrk must count responses and no socket
error and no non-2xx response. With inject_fault the server's first response starts with a
wrong byte, which wrk's HTTP parser must reject (a read error): the check that the first
part can fail. Skipped, saying why, when wrk is not installed. The C++ backends' in-process
servers share one responder (workloads/io/echo.hpp) with these programs' framing
(harness/loadgen/protocol.hpp) and are checked byte for byte by the load generator
(test_io.py)."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = None
PIPELINE_LUA = """
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format(nil, "/hello") end
  req = table.concat(r)
end
request = function() return req end
"""


def http_programs():
    """(name, argv) of every external backend of the build whose --list names http-hello."""
    out = []
    for path in sorted(glob.glob(os.path.join(BUILD, "backends", "*.json"))):
        with open(path) as f:
            m = json.load(f)
        argv = [m["program"], *m.get("args", [])]
        if not os.access(argv[0], os.X_OK):
            continue
        listed = subprocess.run([*argv, "--list"], capture_output=True, text=True, timeout=30)
        try:
            workloads = json.loads(listed.stdout.strip().splitlines()[-1]).get("workloads", [])
        except (ValueError, IndexError):
            continue
        if "http-hello" in workloads:
            out.append((m["name"], argv))
    return out


class Server:
    """One serving program, started with a request for http-hello at one processor."""

    def __init__(self, argv, inject_fault=False):
        req = {"workload": "http-hello", "params": {"connections": "4"}, "processors": 1,
               "warmup": 0, "iterations": 1, "inject_fault": inject_fault, "options": {}}
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        self.port = None
        for _ in range(100):  # lines before the listening one that are not JSON are ignored
            line = self.p.stdout.readline()
            if not line:
                break
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if "listening" in j:
                self.port = j["listening"]
                break
            raise AssertionError(f"{argv} replied {line!r} instead of listening")
        if self.port is None:
            self.close()
            raise AssertionError(f"{argv} printed no listening line")

    def close(self):
        self.p.stdin.close()  # the cue to exit
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError("the server did not exit within 10 s of its stdin's end")
        finally:
            self.p.stdout.close()


def wrk(port, *extra):
    p = subprocess.run(["wrk", "-t1", "-c4", "-d1s", "--timeout", "2s", "--latency", *extra,
                        f"http://127.0.0.1:{port}/hello"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError(f"wrk exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    m = re.search(r"^\s*(\d+) requests in", p.stdout, re.M)
    if not m:
        raise AssertionError(f"no request count in wrk's output:\n{p.stdout}")
    return int(m.group(1)), p.stdout


@unittest.skipIf(shutil.which("wrk") is None,
                 "wrk is not installed (Debian: apt-get install wrk; scripts/install-deps.sh installs it with the tests' packages)")
class Wrk(unittest.TestCase):
    def setUp(self):
        self.programs = http_programs()
        # The epoll ceiling is always built; Go, tokio and Asio when their tools are there.
        self.assertIn("epoll", [n for n, _ in self.programs])

    def test_every_http_server_answers_wrk_without_an_error(self):
        lua = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
        lua.write(PIPELINE_LUA)
        lua.close()
        for name, argv in self.programs:
            for extra in ([], ["-s", lua.name]):
                with self.subTest(backend=name, pipelined=bool(extra)):
                    s = Server(argv)
                    try:
                        n, out = wrk(s.port, *extra)
                    finally:
                        s.close()
                    self.assertGreater(n, 0, out)
                    self.assertNotIn("Socket errors", out)
                    self.assertNotIn("Non-2xx", out)
        os.unlink(lua.name)

    def test_a_corrupted_response_is_a_read_error_for_wrk(self):
        for name, argv in self.programs:
            with self.subTest(backend=name):
                s = Server(argv, inject_fault=True)
                try:
                    _, out = wrk(s.port)
                finally:
                    s.close()
                m = re.search(r"Socket errors: connect (\d+), read (\d+)", out)
                self.assertIsNotNone(m, out)
                self.assertGreaterEqual(int(m.group(2)), 1, out)


if __name__ == "__main__":
    BUILD = sys.argv.pop(1)
    unittest.main()
