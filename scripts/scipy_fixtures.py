#!/usr/bin/env python3
"""Reference fixtures for traparena-stats from SciPy.

Writes crates/traparena-stats/tests/fixtures/scipy_bootstrap.json with:

- ``paired``: datasets of paired per-task means (base, attacked; 30 to 113 tasks) from a
  deterministic generator, and ``scipy.stats.bootstrap`` 95 % intervals of the mean per-task
  difference with n_resamples=10000, both ``method='percentile'`` and ``method='BCa'``, in two
  forms: one-sample on the differences, ``bootstrap((diffs,), np.mean)``, and two-sample with
  ``paired=True`` and the statistic mean(attacked) - mean(base); each form RUNS times with
  different seeds. SciPy's RNG differs from ours, so the Rust tests allow Monte Carlo error
  (0.5 percentage points) against the mean of the runs. The BCa acceleration (deterministic)
  is stored from SciPy's own ``_bca_interval`` when available.
- ``exact``: small datasets with SciPy's whole bootstrap distribution and its percentile and
  BCa ends, so that the interval rule alone can be compared to rounding error.
- ``wilson``: ``scipy.stats.binomtest(k, n).proportion_ci(method='wilson')``.

CI does not need SciPy: the JSON is committed. To regenerate:

    /usr/bin/python3 -m venv /work/venv-scipy
    /work/venv-scipy/bin/pip install -q numpy scipy
    /work/venv-scipy/bin/python scripts/scipy_fixtures.py
"""

import json
import pathlib

import numpy as np
import scipy
from scipy import stats

OUT = (
    pathlib.Path(__file__).resolve().parent.parent
    / "crates/traparena-stats/tests/fixtures/scipy_bootstrap.json"
)
SEED = 20250607
N_RESAMPLES = 10_000
RUNS = 10
LEVEL = 0.95


def per_task_means(rng, p, samples):
    """Binomial means of `samples` episodes per task with success probabilities `p`."""
    return rng.binomial(samples, np.clip(p, 0.0, 1.0)) / samples


def make_paired(rng, name, n, base_rate, effect, effect_sd, icc, m_base, m_attacked):
    conc = 1.0 / icc - 1.0
    p = rng.beta(base_rate * conc, (1.0 - base_rate) * conc, size=n)
    q = p + effect + effect_sd * rng.standard_normal(n)
    return {
        "name": name,
        "base": per_task_means(rng, p, m_base).tolist(),
        "attacked": per_task_means(rng, q, m_attacked).tolist(),
    }


def make_skewed(rng, name, n):
    """Mostly no change, a few tasks collapse: a skewed difference distribution."""
    base = per_task_means(rng, np.full(n, 0.9), 3)
    hit = rng.random(n) < 0.15
    q = np.where(hit, 0.05, 0.9)
    return {"name": name, "base": base.tolist(), "attacked": per_task_means(rng, q, 10).tolist()}


def scipy_acceleration(diffs):
    """SciPy's own jackknife acceleration (private API; None if it moved)."""
    try:
        from scipy.stats._resampling import _bca_interval

        dist = np.asarray([np.mean(diffs)] * 2 + [np.mean(diffs) + 1e-3])
        _, _, a_hat = _bca_interval(
            (np.asarray(diffs),),
            lambda x, axis=-1: np.mean(x, axis=axis),
            axis=-1,
            alpha=(1 - LEVEL) / 2,
            theta_hat_b=dist,
            batch=None,
            xp=np,
        )
        return float(a_hat)
    except Exception as e:  # noqa: BLE001 - optional extra, reported in the JSON
        print("note: SciPy acceleration unavailable:", e)
        return None


def paired_reference(ds, seed):
    """SciPy's intervals for the mean per-task difference, RUNS times per form and method.

    A single run of 10,000 resamples has a Monte Carlo error of a few tenths of a percentage
    point at the BCa ends; the Rust test compares against the mean over all runs.
    """
    base = np.asarray(ds["base"])
    attacked = np.asarray(ds["attacked"])
    diffs = attacked - base
    out = dict(ds)
    out["diffs"] = diffs.tolist()
    out["mean_diff"] = float(np.mean(diffs))
    out["scipy_acceleration"] = scipy_acceleration(diffs)
    for k, method in enumerate(["percentile", "BCa"]):
        runs = {"diffs": [], "paired": []}
        for r in range(RUNS):
            one = stats.bootstrap(
                (diffs,),
                np.mean,
                n_resamples=N_RESAMPLES,
                confidence_level=LEVEL,
                method=method,
                rng=np.random.default_rng([seed, k, r, 0]),
            )
            two = stats.bootstrap(
                (attacked, base),
                lambda a, b, axis=-1: np.mean(a, axis=axis) - np.mean(b, axis=axis),
                paired=True,
                n_resamples=N_RESAMPLES,
                confidence_level=LEVEL,
                method=method,
                rng=np.random.default_rng([seed, k, r, 1]),
            )
            for form, res in [("diffs", one), ("paired", two)]:
                ci = res.confidence_interval
                runs[form].append([float(ci.low), float(ci.high)])
        key = method.lower()
        for form in runs:
            out[f"{key}_{form}_runs"] = runs[form]
    return out


def exact_reference(name, values, n_resamples, level, seed):
    values = np.asarray(values)
    out = {"name": name, "values": values.tolist(), "confidence": level}
    res = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    out["distribution"] = res.bootstrap_distribution.tolist()
    out["percentile"] = [float(res.confidence_interval.low), float(res.confidence_interval.high)]
    # Same distribution, BCa ends: SciPy reuses a previous result with n_resamples=0.
    bca = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=0,
        bootstrap_result=res,
        confidence_level=level,
        method="BCa",
    )
    out["bca"] = [float(bca.confidence_interval.low), float(bca.confidence_interval.high)]
    out["mean"] = float(np.mean(values))
    return out


def main():
    rng = np.random.default_rng(SEED)
    paired = [
        make_paired(rng, "n30_harm", 30, 0.6, -0.20, 0.15, 0.3, 3, 10),
        make_paired(rng, "n60_small", 60, 0.5, -0.05, 0.10, 0.2, 3, 10),
        make_paired(rng, "n113_realistic", 113, 0.55, -0.12, 0.20, 0.35, 3, 10),
        make_skewed(rng, "n45_skewed", 45),
        make_paired(rng, "n80_curator", 80, 0.35, 0.06, 0.10, 0.25, 10, 10),
    ]
    paired = [paired_reference(ds, SEED + 100 * i) for i, ds in enumerate(paired)]
    exact = [
        exact_reference("exp15_level95", rng.exponential(1.0, 15) - 1.0, 999, 0.95, SEED + 7),
        exact_reference("lognormal25_level90", rng.lognormal(0.0, 1.0, 25), 1999, 0.90, SEED + 8),
    ]
    wilson = []
    for k, n, level in [(0, 10, 0.95), (5, 10, 0.95), (10, 10, 0.95), (1, 3, 0.95),
                        (37, 113, 0.95), (873, 1130, 0.99), (2, 50, 0.90), (1, 1, 0.95)]:
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
        wilson.append({"successes": k, "trials": n, "confidence": level,
                       "low": float(ci.low), "high": float(ci.high)})
    doc = {
        "generator": "scripts/scipy_fixtures.py",
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "seed": SEED,
        "n_resamples": N_RESAMPLES,
        "runs_per_form": RUNS,
        "confidence": LEVEL,
        "paired": paired,
        "exact": exact,
        "wilson": wilson,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print("wrote", OUT)
    for ds in paired:
        for key in ["percentile", "bca"]:
            runs = 100 * np.asarray(ds[f"{key}_diffs_runs"] + ds[f"{key}_paired_runs"])
            print(f"{ds['name']:16s} n={len(ds['diffs']):3d} {key:10s} "
                  f"mean ends {runs.mean(axis=0).round(3)} pp, "
                  f"run-to-run SD {runs.std(axis=0, ddof=1).round(3)} pp")


if __name__ == "__main__":
    main()
