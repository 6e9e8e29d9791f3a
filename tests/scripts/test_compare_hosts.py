"""test_compare_hosts — compare.py never puts two machines on the two sides of a ratio without saying so.

  * two folders measured on two hosts (each folder's context.json names its host): no point is
    compared, each is "on different hosts (A: h1; B: h2)", stderr names the hosts, exit 1;
    --across-hosts compares them, and the header says B/A includes the machines' difference;
  * --backends X Y in a merged folder of shards from two nodes, where the shard partition put X on
    one node and Y on the other (the first-user review's F1): the same refusal, naming the hosts
    per point; where both backends ran on both nodes, each host's pair is compared apart
    ("create/N=10/P=1 @vm" and "... @node2") and nothing across;
  * a folder without a host beside one with a host is compared (nothing tells the hosts apart);
  * --paired does not go with --across-hosts (its rounds are one machine's).

Run: /usr/bin/python3 tests/scripts/test_compare_hosts.py -v (CTest scripts.compare_hosts; exits 77 = skipped when
scipy, Debian's python3-scipy, is missing).
"""

import csv
import io
import json
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synthetic  # noqa: E402
from synthetic import TempDirCase, run  # noqa: E402


def set_host(folder: Path, host: str | None) -> None:
    """set_host — folder's context.json names `host` (None: no host key, as a folder that names none)."""
    ctx = json.loads((folder / "context.json").read_text())
    ctx.pop("host", None)
    if host is not None:
        ctx["host"] = host
    (folder / "context.json").write_text(json.dumps(ctx))


def merged(folder: Path, host_of) -> Path:
    """merged — rewrite folder as `coopbench merge` writes a folder of shards: a host column, host_of(row) each
    row's host; context.json names every host."""
    with open(folder / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    out = [dict(r, host=h) for r in rows for h in host_of(r)]
    with open(folder / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=synthetic.schema.concrete_columns(synthetic.PARAMS, merged=True))
        w.writeheader()
        w.writerows(out)
    hosts = sorted({r["host"] for r in out})
    ctx = json.loads((folder / "context.json").read_text())
    ctx.update(host=", ".join(hosts), hosts=len(hosts), shards=2)
    (folder / "context.json").write_text(json.dumps(ctx))
    return folder


def rows_of(p) -> dict:
    """rows_of — compare.py --format csv's rows by point."""
    return {r["point"]: r for r in csv.DictReader(io.StringIO(p.stdout))}


class CompareHostsTest(TempDirCase):
    def folder(self, name, **kw):
        kw.setdefault("repetitions", 4)
        kw.setdefault("workloads", ("create",))
        kw.setdefault("processors", (1,))
        return synthetic.make_results(self.tmp / name, **kw)

    def test_two_folders_of_two_hosts_are_not_compared(self):
        a, b = self.folder("a"), self.folder("b")
        set_host(b, "node2")
        p = run("compare.py", a, b, "--format", "csv")
        self.assertEqual(p.returncode, 1, p.stderr)
        got = rows_of(p)
        r = got["native/create/N=10/P=1"]
        self.assertEqual(r["state"], "on different hosts (A: testhost; B: node2)")
        self.assertEqual(r["ratio"], "")
        self.assertEqual({x["state"] for x in got.values()}, {"on different hosts (A: testhost; B: node2)"})
        self.assertIn("measured on different hosts (A: testhost; B: node2)", p.stderr)
        self.assertIn("no point measured in both A and B on one host", p.stderr)
        t = run("compare.py", a, b)
        self.assertIn('hosts: A: testhost; B: node2: a point is compared with itself on the same host only', t.stdout)
        self.assertRegex(t.stdout, r"native/create/N=10/P=1 .* on different hosts \(A: testhost; B: node2\)\n")
        # Asked for: compared, and the header says what the ratio then holds.
        p = run("compare.py", a, b, "--format", "csv", "--across-hosts")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(rows_of(p)["native/create/N=10/P=1"]["state"], "ok")
        t = run("compare.py", a, b, "--across-hosts").stdout
        self.assertIn("hosts: A: testhost; B: node2: B/A includes the machines' difference (--across-hosts)", t)
        # One host on both sides: compared as before, no host named.
        p = run("compare.py", a, self.folder("c"), "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(rows_of(p)["native/create/N=10/P=1"]["state"], "ok")
        self.assertNotIn("hosts", p.stderr)
        # A folder that names no host: nothing tells the two apart, so it is compared.
        set_host(b, None)
        p = run("compare.py", a, b, "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(rows_of(p)["native/create/N=10/P=1"]["state"], "ok")

    def test_backends_of_a_merged_folder_on_two_nodes_are_not_compared(self):
        # The review's F1: shard 0 measured every native point on vm, shard 1 every pthreads point on node2.
        d = merged(self.folder("m", backends=("native", "pthreads")),
                   lambda r: ["vm" if r["backend"] == "native" else "node2"])
        p = run("compare.py", d, "--backends", "native", "pthreads", "--format", "csv")
        self.assertEqual(p.returncode, 1, p.stderr)
        got = rows_of(p)
        self.assertEqual(got["create/N=10/P=1"]["state"], "on different hosts (A: vm; B: node2)")
        self.assertEqual({x["state"] for x in got.values()}, {"on different hosts (A: vm; B: node2)"})
        self.assertIn("measured on different hosts (A: vm; B: node2)", p.stderr)
        p = run("compare.py", d, "--backends", "native", "pthreads", "--paired")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("on different hosts (A: vm; B: node2)", p.stdout)
        self.assertEqual(run("compare.py", d, "--backends", "native", "pthreads", "--paired", "--across-hosts")
                         .returncode, 2)
        p = run("compare.py", d, "--backends", "native", "pthreads", "--across-hosts", "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(rows_of(p)["create/N=10/P=1"]["state"], "ok")

    def test_backends_of_a_merged_folder_are_compared_per_host(self):
        # Both backends ran on both nodes, pthreads on node2 at half its vm value: each host's pair apart.
        d = self.folder("m", backends=("native", "pthreads"))
        with open(d / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        with open(d / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=synthetic.schema.concrete_columns(synthetic.PARAMS, merged=True))
            w.writeheader()
            for r in rows:
                w.writerow(dict(r, host="vm"))
                half = r["backend"] == "pthreads" and r["value"]
                w.writerow(dict(r, host="node2", value=repr(float(r["value"]) / 2) if half else r["value"]))
        p = run("compare.py", d, "--backends", "native", "pthreads", "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        got = rows_of(p)
        self.assertNotIn("create/N=10/P=1", got)
        vm, node2 = got["create/N=10/P=1 @vm"], got["create/N=10/P=1 @node2"]
        self.assertEqual((vm["state"], node2["state"]), ("ok", "ok"))
        self.assertAlmostEqual(float(node2["ratio"]) / float(vm["ratio"]), 0.5, places=9)
        self.assertEqual((vm["forks_a"], vm["forks_b"]), ("4", "4"))  # no host's forks pooled into another's
        self.assertNotIn("different hosts", p.stderr)


if __name__ == "__main__":
    try:
        import scipy.stats  # noqa: F401
    except ImportError:
        print("test_compare_hosts: scipy (python3-scipy) missing: skipped")
        sys.exit(77)
    unittest.main()
