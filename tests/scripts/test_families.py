"""test_families — scripts/coopbench/families.py: each backend's peer family and each family's best variant."""

import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))

import pandas as pd  # noqa: E402

from coopbench.families import best_variants, family_label, family_of  # noqa: E402


class Families(unittest.TestCase):
    def test_family_of(self):
        cases = {
            "native": "coop", "native-ws": "coop", "native-parasail": "coop", "native-implicit": "coop",
            "tokio": "tokio", "tokio-std-mutex": "tokio", "tokio/current_thread": "tokio",
            "boostfiber/shared_work": "boostfiber", "boostfiber/round_robin": "boostfiber",
            "pthreads": "os-threads", "stdthread": "os-threads", "go": "go",
            "node": "node", "nativeish": "nativeish",
        }
        for backend, family in cases.items():
            self.assertEqual(family_of(backend), family, backend)
        self.assertEqual(family_label("boostfiber"), "Boost.Fiber")
        self.assertEqual(family_label("node"), "node")

    def test_best_variant_per_point_and_family(self):
        df = pd.DataFrame({
            "point": ["a"] * 5 + ["b"] * 3,
            "backend": ["native", "native-ws", "tokio", "tokio-std-mutex", "go", "native", "go", "tokio"],
            "median": [3.0, 2.0, 5.0, 4.0, 6.0, 1.0, math.nan, 7.0],
        })
        best = best_variants(df, ["point"])
        got = {(r.point, r.family): (r.backend, r.median) for r in best.itertuples()}
        # the peer's best variant stands for it, never its second best
        self.assertEqual(got[("a", "coop")], ("native-ws", 2.0))
        self.assertEqual(got[("a", "tokio")], ("tokio-std-mutex", 4.0))
        self.assertEqual(got[("a", "go")], ("go", 6.0))
        # a variant that did not run (NaN) stands for nothing
        self.assertNotIn(("b", "go"), got)
        self.assertEqual(got[("b", "tokio")], ("tokio", 7.0))
        # families in the summary order: coop first
        self.assertEqual(list(best[best.point == "a"].family), ["coop", "go", "tokio"])

    def test_nothing_ran(self):
        df = pd.DataFrame({"point": ["a"], "backend": ["go"], "median": [math.nan]})
        self.assertTrue(best_variants(df, ["point"]).empty)


if __name__ == "__main__":
    unittest.main()
