"""The overhead of gpuprobe.torch.instrument on the model zoo (test/python/zoo), against no
profiler and torch.profiler, in the same process: per model and step kind (a training step:
forward, loss, backward, SGD step; an inference step: eval, no_grad), the median time per step
of three arms, interleaved and repeated:

    none            the model alone
    gpuprobe        instrument(model) + instrument_optimizer + watch_gc, a recording Session
    torch.profiler  torch.profiler.profile(activities=[CPU] (+ CUDA with --device cuda))

Every round runs each arm once (warm-up steps, then --steps timed steps inside the arm's
session or profiler, whose start and end, trace writing included, are not timed), in the
opposite order every other round; a ratio to "none" is taken within each round and the median
taken across rounds. With --device cuda each timed span ends with torch.cuda.synchronize().

    python bench/python/zoo_overhead.py                      # the default models, CPU
    python bench/python/zoo_overhead.py --models 'resnet|bert' --rounds 5 --device cuda
    python bench/python/zoo_overhead.py --models all          # every model CI runs eager

An arm that raises (today's instrument() with in-place ReLUs, say) shows its error instead of
a time; the others are still measured.
"""
import argparse
import contextlib
import copy
import json
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "test", "python"))

DEFAULT_MODELS = (
    "torchvision/resnet18", "torchvision/mobilenet_v3_small", "torchvision/efficientnet_b0",
    "torchvision/convnext_tiny", "torchvision/densenet121", "torchvision/swin_t",
    "torchvision/vit_b_32", "timm/vit_tiny_patch16_224", "timm/mixer_s32_224",
    "transformers/bert", "transformers/gpt2", "transformers/t5", "transformers/llama",
)
ARMS = ("none", "gpuprobe", "torch.profiler")


class Arm:
    """One arm on its own copy of a model: ``context()`` is entered around each round's steps."""

    def __init__(self, name, pristine, device, tmpdir):
        import torch

        self.name = name
        self.model = copy.deepcopy(pristine).to(device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.device = device
        self.tmpdir = tmpdir
        self.error = None
        self.samples = []  # seconds per step, one per round
        if name == "gpuprobe":
            import gpuprobe
            import gpuprobe.torch as gt

            gt.instrument(self.model)
            gt.instrument_optimizer(self.opt)
            gpuprobe.watch_gc()

    def context(self):
        if self.name == "gpuprobe":
            import gpuprobe

            return gpuprobe.Session(f"chrome={os.path.join(self.tmpdir, 'gpuprobe.json')}")
        if self.name == "torch.profiler":
            import torch

            activities = [torch.profiler.ProfilerActivity.CPU]
            if self.device == "cuda":
                activities.append(torch.profiler.ProfilerActivity.CUDA)
            return torch.profiler.profile(activities=activities)
        return contextlib.nullcontext()


def _step(arm, kind, inputs):
    import torch

    from zoo.runner import loss_of

    args, kwargs = inputs
    if kind == "infer":
        arm.model.eval()
        with torch.no_grad():
            arm.model(*args, **kwargs)
        return
    arm.model.train()
    arm.opt.zero_grad(set_to_none=True)
    loss_of(arm.model(*args, **kwargs)).backward()
    arm.opt.step()


def _sync(device):
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def _round(arm, kind, inputs, warmup, steps):
    """Seconds per step of one round of ``arm``, or None once it has raised."""
    if arm.error is not None:
        return None
    try:
        with arm.context():
            for _ in range(warmup):
                _step(arm, kind, inputs)
            _sync(arm.device)
            started = time.perf_counter()
            for _ in range(steps):
                _step(arm, kind, inputs)
            _sync(arm.device)
            seconds = (time.perf_counter() - started) / steps
    except Exception as e:
        arm.error = f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
        return None
    arm.samples.append(seconds)
    return seconds


def measure(spec, kind, device, rounds, warmup, steps):
    """{arm: {"ms": median ms per step, "ratio": median within-round ratio to none, "error"}}."""
    import torch

    import zoo

    pristine, inputs = zoo.build(spec)
    inputs = (tuple(a.to(device) for a in inputs[0]),
              {k: v.to(device) for k, v in inputs[1].items()})
    with tempfile.TemporaryDirectory() as tmp:
        arms = [Arm(name, pristine, device, tmp) for name in ARMS]
        ratios = {a.name: [] for a in arms}
        for r in range(rounds):
            times = {}
            for arm in (arms if r % 2 == 0 else arms[::-1]):
                torch.manual_seed(r)
                times[arm.name] = _round(arm, kind, inputs, warmup, steps)
            for name, t in times.items():
                if t is not None and times["none"]:
                    ratios[name].append(t / times["none"])
        out = {}
        for arm in arms:
            out[arm.name] = {
                "ms": statistics.median(arm.samples) * 1e3 if arm.samples else None,
                "ratio": statistics.median(ratios[arm.name]) if ratios[arm.name] else None,
                "error": arm.error,
            }
        if any(a.name == "gpuprobe" for a in arms):
            import gpuprobe

            gpuprobe.unwatch_gc()
    return out


def _cell(result):
    if result["error"]:
        return "error", result["error"][:70]
    return f"{result['ms']:.2f} ms", f"x{result['ratio']:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="default",
                        help="'default', 'all' (every model CI runs eager) or a regex on names")
    parser.add_argument("--kinds", default="train,infer", help="step kinds: train, infer")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per arm and round")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)

    import torch

    import zoo

    torch.set_num_threads(args.threads)
    specs = [s for s in zoo.models() if not s.heavy]
    if args.models == "default":
        specs = [s for s in specs if s.name in DEFAULT_MODELS]
    elif args.models != "all":
        specs = [s for s in specs if re.search(args.models, s.name)]
    device_name = (torch.cuda.get_device_name() if args.device == "cuda" else "cpu")
    print(f"torch {torch.__version__}, {device_name}, {args.threads} thread(s), {args.rounds} "
          f"rounds x {args.steps} steps (+{args.warmup} warm-up), interleaved; median ms per "
          "step, median within-round ratio to none")
    print("| model | step | none | gpuprobe | x none | torch.profiler | x none | gpuprobe / "
          "torch.profiler |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for spec in specs:
        for kind in args.kinds.split(","):
            result = measure(spec, kind, args.device, args.rounds, args.warmup, args.steps)
            none, probe, prof = result["none"], result["gpuprobe"], result["torch.profiler"]
            vs = (f"{probe['ms'] / prof['ms']:.2f}" if probe["ms"] and prof["ms"] else "-")
            if none["error"]:
                print(f"| {spec.name} | {kind} | error: {none['error']} | | | | | |", flush=True)
                continue
            print(f"| {spec.name} | {kind} | {none['ms']:.2f} ms | {' | '.join(_cell(probe))} | "
                  f"{' | '.join(_cell(prof))} | {vs} |", flush=True)
            rows.append({"model": spec.name, "kind": kind, "device": device_name, **result})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
