"""The zoo as a table: ``python -m zoo [--filter RE] [--modes eager,compile] [--backend eager]
[--json OUT]``, run from test/python (or with it on sys.path). One row per model and mode:
status, Dynamo's graphs/breaks/recompiles without -> with gpuprobe, seconds of each run, and
the first problem."""
import argparse
import json
import re
import sys
import tempfile


def _counts(dynamo):
    if not dynamo:
        return "-"
    return f"{dynamo['graphs']}/{dynamo['graph_breaks']}/{dynamo['recompiles']}"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m zoo", description=__doc__)
    parser.add_argument("--filter", default="", help="regular expression on model names")
    parser.add_argument("--modes", default="eager,compile")
    parser.add_argument("--backend", default="eager", help="torch.compile backend (eager, "
                        "aot_eager, inductor)")
    parser.add_argument("--heavy", action="store_true", help="also the models left out of CI")
    parser.add_argument("--json", help="write every case's outcome here")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    import zoo

    rows = []
    print("| model | mode | status | graphs/breaks/recompiles without -> with | s without | "
          "s with | problem |")
    print("|---|---|---|---|---|---|---|")
    for spec in zoo.models():
        if not re.search(args.filter, spec.name):
            continue
        if spec.heavy and not args.heavy:
            print(f"| {spec.name} | all | skipped | - | - | - | {spec.heavy} |", flush=True)
            continue
        try:
            built = zoo.build(spec)
        except Exception as e:
            print(f"| {spec.name} | all | build error | - | - | - | {e} |", flush=True)
            continue
        for mode in args.modes.split(","):
            with tempfile.TemporaryDirectory() as tmp:
                case = zoo.run_case(spec, mode, tmp, args.backend, built)
            problem = (case.base.error if case.base.error else
                       case.problems[0] if case.problems else "")
            counts = (f"{_counts(case.base.dynamo)} -> {_counts(case.probe.dynamo)}"
                      if mode == "compile" else "-")
            print(f"| {spec.name} | {mode} | {case.status} | {counts} | {case.base.seconds:.2f} "
                  f"| {case.probe.seconds:.2f} | {problem.replace('|', '/')[:160]} |", flush=True)
            rows.append({"model": spec.name, "mode": mode, "backend": args.backend,
                         "status": case.status, "problems": case.problems,
                         "base_error": case.base.error, "probe_error": case.probe.error,
                         "base_dynamo": case.base.dynamo, "probe_dynamo": case.probe.dynamo,
                         "base_seconds": case.base.seconds, "probe_seconds": case.probe.seconds,
                         "module_ranges": case.module_ranges, "note": spec.note})
        del built
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
