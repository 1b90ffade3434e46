"""Record a torch.profiler (Kineto) trace of a few training steps of a torchvision model, for the
corpus of test/data/wild. The same script serves every torch release from 1.13 on and both
devices: CPU here, CUDA (or ROCm, whose torch also calls its device "cuda") on a GPU machine.

    python record_torch_trace.py OUT.json.gz [--device cpu|cuda] [--model resnet18]
                                 [--steps 3] [--batch 2] [--size 64]

The model is torchvision's, built with random weights (nothing is downloaded). The profiler
runs with a schedule (one step skipped, one warm-up, then --steps active steps), so the trace
carries ProfilerStep#N ranges as a real job's does. The torch and torchvision versions go into
the trace's metadata (torch_version, torchvision_version) where the profiler supports it."""
import argparse
import gzip
import os
import shutil
import sys
import tempfile

import torch
import torchvision


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the trace to write (gzipped when it ends in .gz)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--model", default="resnet18", help="a torchvision.models name")
    parser.add_argument("--steps", type=int, default=3, help="active (recorded) steps")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, default=64, help="image side in pixels")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    device = torch.device(args.device)
    model = getattr(torchvision.models, args.model)(num_classes=10).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    images = torch.randn(args.batch, 3, args.size, args.size)
    labels = torch.randint(0, 10, (args.batch,))

    activities = [torch.profiler.ProfilerActivity.CPU]
    if args.device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    tmp = tempfile.mkdtemp()
    raw = os.path.join(tmp, "trace.json")
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=args.steps, repeat=1)
    with torch.profiler.profile(activities=activities, schedule=schedule,
                                on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for step in range(2 + args.steps):
            if step == 2 and hasattr(prof, "add_metadata"):  # recording: the metadata is kept
                prof.add_metadata("torch_version", torch.__version__)
                prof.add_metadata("torchvision_version", torchvision.__version__)
            x, y = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            if args.device == "cuda":
                torch.cuda.synchronize()
            prof.step()

    if args.out.endswith(".gz"):
        with open(raw, "rb") as src, gzip.open(args.out, "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copyfile(raw, args.out)
    shutil.rmtree(tmp)
    print(f"{args.out}: torch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"{args.model} on {args.device}, {args.steps} steps", file=sys.stderr)


if __name__ == "__main__":
    main()
