"""The wait for data (the seed's DataLoader case): `gpuprobe.torch.instrument_dataloader()`
records each fetch of a batch, and `gpuprobe report` gives the wait per batch and names the
program data-loading-bound when its steps spend most of their time waiting — and does not when
the data comes quickly."""
import json
import math
import os
import pathlib
import subprocess
import time

import pytest

import gpuprobe

torch = pytest.importorskip("torch")
import gpuprobe.torch as gt  # noqa: E402

CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"


class SlowDataset(torch.utils.data.Dataset):
    def __init__(self, n, seconds):
        self.n, self.seconds = n, seconds

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(self.seconds)  # decoding an image, reading a file
        return torch.full((16,), float(i))


def train(tmp_path, item_seconds):
    """40 steps of a small model over batches of 4 items; the report's JSON and text."""
    loader = gt.instrument_dataloader(
        torch.utils.data.DataLoader(SlowDataset(160, item_seconds), batch_size=4))
    assert len(loader) == 40 and loader.batch_size == 4  # the loader's own, through the wrapper
    model = torch.nn.Linear(16, 16)
    trace = tmp_path / "trace.json"
    waits = []  # the loop's own clock around each fetch: the independent measure
    with gpuprobe.Session(f"chrome={trace}"):
        batches = iter(loader)
        while True:
            begin = time.perf_counter()
            batch = next(batches, None)
            waits.append((time.perf_counter() - begin) * 1e3)
            if batch is None:
                break
            with gpuprobe.range("train step"):
                model(batch).sum().backward()
                time.sleep(0.002)  # the step's own work
            gpuprobe.step()
    data = json.loads(subprocess.run([str(CLI), "report", "--json", str(trace)],
                                     capture_output=True, text=True, check=True).stdout)
    text = subprocess.run([str(CLI), "report", str(trace)], capture_output=True, text=True,
                          check=True).stdout
    return data, text, waits


def quantile(values, q):
    """The nearest-rank quantile, as the report computes it."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def test_steps_waiting_for_data_are_data_loading_bound(tmp_path):
    data, text, waits = train(tmp_path, 0.005)  # 20 ms a batch against a 2 ms step
    d = data["data_loading"]
    assert d["batches"] == len(waits) == 41  # 40 batches and the fetch that found the end
    # The wait per batch as the loop's own clock saw it, within 20 %.
    assert d["p50_ms"] == pytest.approx(quantile(waits, 0.5), rel=0.2)
    assert d["p99_ms"] == pytest.approx(quantile(waits, 0.99), rel=0.2)
    assert d["max_ms"] == pytest.approx(max(waits), rel=0.2)
    assert d["p50_ms"] >= 18  # four sleeps of 5 ms
    assert d["share"] > 0.6
    assert data["verdict"].startswith("data-loading-bound: the steps wait for their next batch")
    assert "num_workers" in data["verdict"]
    assert "data loading: 41 batches" in text


def test_fast_data_is_not_the_verdict(tmp_path):
    data, _, _ = train(tmp_path, 0)
    assert data["data_loading"]["batches"] == 41
    assert data["data_loading"]["share"] < 0.5
    assert not data["verdict"].startswith("data-loading-bound")
