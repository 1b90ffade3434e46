"""The agreement table of the wild corpus: for each trace, the report's figures beside HTA's own
(on the definition-matched copy, wild_corpus.py) — kernels, GPU busy, idle split (all streams),
launch delay P50/P99, temporal breakdown. The tests assert these; this prints them, for notes.

    python test/python/wild_table.py      (GPUPROBE_BUILD_DIR: the gpuprobe command's build)"""
import math
import pathlib
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import wild_corpus as wc  # noqa: E402


def nearest_rank(values, q):
    return values[max(math.ceil(q * len(values)) - 1, 0)] if values else float("nan")


def main():
    print("| trace | vendor | kernels (ours / HTA) | busy ms | host wait ms | kernel wait ms | "
          "other idle ms | launch p50 us | launch p99 us | compute ms | idle % of span |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for i, t in enumerate(wc.CORPUS):
            if not t.path.exists():
                print(f"| {t.file} | {t.vendor} | not fetched | | | | | | | | |")
                continue
            ours = wc.report(t)
            if t.vendor == "CPU" or t.hta_fails:
                why = "CPU only" if t.vendor == "CPU" else "HTA cannot read it"
                print(f"| {t.file} | {t.vendor} | {len(ours['kernels'])} / - ({why}) | | | | | | "
                      "| | |")
                continue
            h = wc.Hta(t.path, pathlib.Path(tmp) / str(i))
            hk = sum(c for name, (c, _) in h.kernels.items()
                     if not name.startswith(("Memcpy", "Memset")))
            ok = sum(k["calls"] for k in ours["kernels"])
            streams = ours["gpu"]["streams"]
            idle = {c: sum(v for (_, cat), v in h.idle.items() if cat == c) / 1000
                    for c in ("host_wait", "kernel_wait", "other")}
            mine = {c: sum(s[k] for s in streams) for c, k in
                    (("host_wait", "host_wait_ms"), ("kernel_wait", "kernel_wait_ms"),
                     ("other", "other_idle_ms"))}
            device = next(iter(ours["gpu"]["breakdown"].values()))
            busy = device["busy_ms"]
            lo = ours["gpu"].get("launch_delay_us") or {}
            d = h.launch_delays_us
            tm = h.temporal

            def pair(a, b, f="{:.3f}"):
                return f"{f.format(a)} / {f.format(b)}"
            print(f"| {t.file} | {t.vendor} | {ok} / {hk} | {pair(busy, h.busy_us / 1000)} | "
                  f"{pair(mine['host_wait'], idle['host_wait'])} | "
                  f"{pair(mine['kernel_wait'], idle['kernel_wait'])} (HTA incl. overlaps) | "
                  f"{pair(mine['other'], idle['other'])} | "
                  f"{pair(lo.get('p50', float('nan')), nearest_rank(d, 0.5), '{:.2f}')} | "
                  f"{pair(lo.get('p99', float('nan')), nearest_rank(d, 0.99), '{:.2f}')} | "
                  f"{pair(device['compute_ms'], tm['compute_time(us)'] / 1000)} | "
                  f"{pair(device['idle_percent_of_span'], tm['idle_time_pctg'], '{:.2f}')} |")


if __name__ == "__main__":
    main()
