"""TensorBoard's own event reader (PyPI `tensorboard`) reads back every scalar and histogram the
TensorBoard sink wrote, with their steps, for a trace whose answers are known."""
import os
import pathlib
import subprocess

from tensorboard.backend.event_processing import event_accumulator

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))


def write_synthetic(config):
    subprocess.run([str(BUILD / "test" / "write_synthetic_gpu_trace"), config], check=True)


def test_tensorboard_reads_scalars_and_histograms(tmp_path):
    # 3 steps of 600 us; per step 10 x 20 us + 10 x 3 us of kernels on GPU 0 (38.3 % busy) and one
    # 599 us "forward" range.
    write_synthetic(f"tensorboard={tmp_path}")
    acc = event_accumulator.EventAccumulator(
        str(tmp_path), size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    tags = acc.Tags()
    assert set(tags["scalars"]) == {
        "step/time_ms", "gpu0/busy_percent", "gpu0/kernels", "gpuprobe/events_dropped",
        "ranges/forward/p50_ms", "ranges/forward/p99_ms", "ranges/forward/count"}
    assert tags["histograms"] == ["ranges/forward"]

    def series(tag):
        return [(e.step, e.value) for e in acc.Scalars(tag)]

    assert [s for s, _ in series("step/time_ms")] == [0, 1, 2]
    for tag, expected in [("step/time_ms", 0.6), ("gpu0/busy_percent", 230 / 600 * 100),
                          ("gpu0/kernels", 20), ("gpuprobe/events_dropped", 0),
                          ("ranges/forward/p50_ms", 0.599), ("ranges/forward/p99_ms", 0.599),
                          ("ranges/forward/count", 1)]:
        for _, value in series(tag):
            assert abs(value - expected) <= 1e-4 * max(1, expected), (tag, value)
    histograms = acc.Histograms("ranges/forward")
    assert [h.step for h in histograms] == [0, 1, 2]
    for h in histograms:
        v = h.histogram_value
        assert v.num == 1 and abs(v.min - 0.599) < 1e-9 and abs(v.max - 0.599) < 1e-9
        assert len(v.bucket) == len(v.bucket_limit) and sum(v.bucket) == 1
    # The file's metadata: the summaries' descriptions came through.
    meta = acc.SummaryMetadata("step/time_ms")
    assert meta.plugin_data.plugin_name == "scalars"
    assert "gpuprobe::step()" in meta.summary_description


def test_tensorboard_checks_our_record_checksums(tmp_path):
    """TensorBoard's record reader verifies the masked CRC-32C of each record: a flipped byte in
    our file is reported as data loss, so the CRCs it accepts above are really checked."""
    from tensorboard.compat.tensorflow_stub import errors
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import PyRecordReader_New

    write_synthetic(f"tensorboard={tmp_path}")
    events = next(tmp_path.glob("events.out.tfevents.*"))

    def read_all(path):
        reader = PyRecordReader_New(str(path).encode())
        records = 0
        while True:
            try:
                reader.GetNext()
            except errors.OutOfRangeError:
                return records
            records += 1

    assert read_all(events) == 4  # file version + three steps
    data = bytearray(events.read_bytes())
    data[40] ^= 0xFF
    events.write_bytes(bytes(data))
    try:
        read_all(events)
    except errors.DataLossError:
        return
    raise AssertionError("a corrupted record was accepted")
