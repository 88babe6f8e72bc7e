"""The statistics give the same bits whichever BLAS kernel the processor selects.

numpy hands a float matrix product to OpenBLAS, which picks its kernel from the processor at
start-up: an AVX-512 machine adds in another order than an AVX2 one, so a readout computed with
``@`` can differ in its last digit between a developer's laptop, a CI runner and a team server,
and ``readout.json`` is then not byte-identical (the demo hashes failed this way when CI moved
to a machine without AVX-512). OpenBLAS lets ``OPENBLAS_CORETYPE`` choose the kernel, so the
same computation is run under the processor's own kernel and under the oldest one (Prescott,
SSE3, which every x86-64 processor runs) and the outputs are compared byte for byte.

numpy has its own processor-chosen code: on an AVX-512 machine its float64 exp, log1p, cbrt
and powers are not the C library's, and the demo's detection limits moved in their last
digit there (``stats/libm.py``). ``NPY_DISABLE_CPU_FEATURES`` turns that code off, so the same
computation also runs with numpy's dispatch limited to its baseline, where the processor has
more.
"""

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                                reason="OPENBLAS_CORETYPE names x86-64 kernels")

# Every procedure with a product over goldens or clusters: the clustered bootstrap of a pass
# rate and of scores, the cost bootstrap (unclustered and clustered), CR2 degrees of freedom
# (unweighted and weighted by slice), and κ's expected agreement; and every one with an exp,
# log1p, log2, cube or cube root: the exact-power detection limit, the skewness of the
# bootstrap-t and of Hall's interval, the sequential readout, nDCG's rank discounts and the
# retrieval chance levels.
PROGRAM = r"""
import json
import numpy as np
import langchef_core as lc
from langchef_core.stats.agreement import agreement
from langchef_core.stats.costs import compare_cost
from langchef_core.stats.sequential import compare_sequential
from langchef_core.stats.slices import compare_slices
from langchef_core.scoring.retrieval.chance import chance_levels
from langchef_core.scoring.retrieval.kernel import rank_discounts

rng = np.random.default_rng(7)
chance = chance_levels(rng.integers(20, 60, 50), rng.integers(1, 5, 50))
n = 240
users = np.repeat(np.arange(40), 6)
base = rng.random(n) < 0.7
var = np.where(rng.random(n) < 0.1, ~base, base)
scores_b, scores_v = rng.random(n), rng.random(n) * 0.9 + 0.05
latency_b, latency_v = rng.lognormal(6.5, 0.4, n), rng.lognormal(6.4, 0.4, n)
slices = np.array(["new", "returning", "admin"])[rng.integers(0, 3, n)]
out = {
    "binary_clustered": lc.compare_binary(base, var, clusters=users, resamples=2000).to_dict(),
    "continuous_clustered": lc.compare_continuous(scores_b, scores_v, clusters=users,
                                                  resamples=2000).to_dict(),
    "cost": compare_cost(latency_b, latency_v, metric="latency_ms", resamples=2000).to_dict(),
    "cost_clustered": compare_cost(latency_b, latency_v, metric="latency_ms", clusters=users,
                                   resamples=2000).to_dict(),
    "slices_clustered": compare_slices(
        base, var, slices, column="segment",
        target_weights={"new": 0.5, "returning": 0.3, "admin": 0.2}, clusters=users,
        resamples=2000).to_dict(),
    "kappa": agreement([f"a{i}" for i in range(60)], rng.random(60) < 0.6,
                       rng.random(60) < 0.6).to_dict(),
    "binary": lc.compare_binary(base, var).to_dict(),
    "continuous": lc.compare_continuous(latency_b, latency_v, resamples=2000).to_dict(),
    "continuous_hall": lc.compare_continuous(rng.lognormal(0, 1, 6000),
                                             rng.lognormal(0, 1, 6000)).to_dict(),
    "sequential": compare_sequential(scores_b, scores_v, binary=False, max_n=400).to_dict(),
    "sequential_binary": compare_sequential(base, var, binary=True, max_n=400).to_dict(),
    "discounts_2000_ranks": rank_discounts(2000).tolist(),  # numpy's log2 differs at rank 1620
    "chance": {name: chance.values(name).tolist()
               for name in ("recall", "mrr", "ndcg")},
}
print(json.dumps(out, sort_keys=True, default=repr))
"""


def _run(coretype: str | None, numpy_features: str | None = None) -> str:
    env = {key: value for key, value in os.environ.items()
           if key not in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")}
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    if numpy_features:
        env["NPY_DISABLE_CPU_FEATURES"] = numpy_features
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_procedure_gives_the_same_bits_under_another_blas_kernel():
    native, oldest = _run(os.environ.get("OPENBLAS_CORETYPE")), _run("Prescott")
    mine, old = json.loads(native), json.loads(oldest)
    assert len(mine) == 13
    assert [name for name in mine if mine[name] != old[name]] == []
    assert native == oldest


def _numpy_dispatch_beyond_baseline() -> str:
    """The processor features numpy found beyond the ones it was built for, e.g. AVX-512."""
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__
    return " ".join(name for name in __cpu_dispatch__
                    if __cpu_features__.get(name) and name not in __cpu_baseline__)


def test_every_procedure_gives_the_same_bits_without_numpys_processor_specific_code():
    beyond = _numpy_dispatch_beyond_baseline()
    if not beyond:
        pytest.skip("numpy runs only its baseline code on this processor: nothing to turn off")
    native = _run(os.environ.get("OPENBLAS_CORETYPE"))
    assert native == _run(os.environ.get("OPENBLAS_CORETYPE"), beyond)
