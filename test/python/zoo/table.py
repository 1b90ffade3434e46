"""The zoo's table (models x modes) from the JSON lines test_model_zoo.py writes with
GPUPROBE_ZOO_TABLE: ``python -m zoo.table PATH``. One row per model; per mode its status and,
under torch.compile, Dynamo's graphs/breaks/recompiles without -> with gpuprobe."""
import collections
import json
import sys


def _cell(row):
    if row is None:
        return "skipped"
    status = {"pass": "pass", "fail": "FAIL", "baseline error": "baseline error"}[row["status"]]
    if row["base_dynamo"]:
        b, p = row["base_dynamo"], row["probe_dynamo"]
        status += (f" {b['graphs']}/{b['graph_breaks']}/{b['recompiles']} -> "
                   f"{p['graphs']}/{p['graph_breaks']}/{p['recompiles']}")
    return status


def _why(row):
    if row["status"] == "pass":
        return ""
    if row["status"] == "baseline error":
        return "fails without gpuprobe too: " + (row["base_error"] or "")
    if row["probe_error"]:
        return "raises: " + row["probe_error"]
    return row["problems"][0] if row["problems"] else (row["base_error"] or "")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rows = [json.loads(line) for line in open(argv[0]) if line.strip()]
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    by_model = collections.OrderedDict()
    for r in rows:
        by_model.setdefault(r["model"], {})[r["mode"]] = r
    print("| model | " + " | ".join(modes) + " | first problem |")
    print("|---|" + "---|" * len(modes) + "---|")
    for model, cases in by_model.items():
        why = next((_why(cases[m]) for m in modes if m in cases and _why(cases[m])), "")
        print(f"| {model} | " + " | ".join(_cell(cases.get(m)) for m in modes) +
              f" | {why.replace('|', '/')[:140]} |")
    counts = collections.Counter((r["mode"], r["status"]) for r in rows)
    print()
    for mode in modes:
        print(f"{mode}: " + ", ".join(f"{s} {n}" for (m, s), n in sorted(counts.items())
                                      if m == mode))
    return 0


if __name__ == "__main__":
    sys.exit(main())
