"""Measures several cases interleaved and repeated, so that neither the order of the cases nor
the machine's drift during a run biases a ratio between them: every round runs each case once,
in the opposite order every other round, and a ratio is taken within each round before the
median is taken across rounds.

A case is (statement, globals, context): `context` is a callable returning a context manager
entered around that case's measurement only (a recording session, say), or None.
"""
import contextlib
import random
import statistics
import timeit


def quantile(values, q):
    """The value at quantile q of `values` (the nearest rank at or above it)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def bootstrap_mean(values, resamples=4000, seed=1, statistic=statistics.fmean):
    """A 95 % interval of the mean of `values` (resampled with replacement, over rounds), or of
    another `statistic` of them (statistics.median: robust to the few rounds a shared machine
    slows as a whole)."""
    rng = random.Random(seed)
    estimates = sorted(statistic(rng.choices(values, k=len(values))) for _ in range(resamples))
    return estimates[int(0.025 * resamples)], estimates[int(0.975 * resamples) - 1]


def per_use_ns(stmt, g, number):
    return timeit.timeit(stmt, globals=g, number=number) / number * 1e9


def measure(cases, rounds=10, number=100_000):
    """{name: [ns per use, one per round]} for `cases`, a dict name -> (stmt, globals, context)."""
    names = list(cases)
    samples = {name: [] for name in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else reversed(names)):
            stmt, g, context = cases[name]
            with (context() if context is not None else contextlib.nullcontext()):
                samples[name].append(per_use_ns(stmt, g, number))
    return samples


def summarize(samples, baseline):
    """Rows (name, median ns, min, max, median ratio to `baseline` within rounds, ratio min, max)."""
    rows = []
    for name, values in samples.items():
        ratios = [v / b for v, b in zip(values, samples[baseline])]
        rows.append((name, statistics.median(values), min(values), max(values),
                     statistics.median(ratios), min(ratios), max(ratios)))
    return rows


def print_rows(rows, baseline, file=None):
    print(f"{'case':48s} {'median ns':>9s} {'range':>17s} {'x ' + baseline[:24]:>28s}", file=file)
    for name, med, lo, hi, ratio, rlo, rhi in rows:
        print(f"{name:48s} {med:9.1f} {lo:8.1f}..{hi:<8.1f} {ratio:8.2f} ({rlo:.2f}..{rhi:.2f})",
              file=file)
