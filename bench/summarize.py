"""Prints a Google Benchmark JSON result as a table, with each per-iteration time as a ratio to
the floor (two clock reads and a store) measured in the same run. Medians of the repetitions."""
import json
import sys


def main(path):
    with open(path) as f:
        result = json.load(f)
    medians = {}
    for b in result["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        name = b.get("run_name", b["name"]).split("/repeats")[0]
        medians[name] = b
    floor = medians.get("BM_Floor_TwoClockReadsAndStore")
    floor_ns = floor["cpu_time"] if floor else None
    print(f"{'case':40s} {'ns/iter':>10s} {'x floor':>8s} {'items/s':>12s}")
    for name, b in medians.items():
        unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
        ns = b["cpu_time"] * unit
        ratio = f"{ns / floor_ns:8.2f}" if floor_ns and ns < 1e5 else " " * 8
        rate = b.get("items_per_second")
        rate_text = f"{rate / 1e6:10.1f} M" if rate else ""
        print(f"{name:40s} {ns:10.2f} {ratio} {rate_text:>12s}")
    ctx = result["context"]
    print(f"\n{ctx.get('host_name', '?')}: {ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz, "
          f"{result['context'].get('date', '')}")


if __name__ == "__main__":
    main(sys.argv[1])
