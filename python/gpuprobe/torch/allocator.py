"""The CUDA caching allocator's statistics as counters (category "alloc")."""
from gpuprobe import _core
from gpuprobe.torch._common import EVENTS, FeatureUnavailable, _torch


# (counter name, key in torch.cuda.memory_stats)
ALLOCATOR_COUNTERS = [
    (EVENTS["allocated_bytes"], "allocated_bytes.all.current"),
    (EVENTS["reserved_bytes"], "reserved_bytes.all.current"),
    (EVENTS["inactive_split_bytes"], "inactive_split_bytes.all.current"),
    (EVENTS["alloc_retries"], "num_alloc_retries"),
    (EVENTS["ooms"], "num_ooms"),
]


def record_allocator_stats(device=None):
    """Records the CUDA caching allocator's statistics of ``device`` as counters (category
    "alloc"): allocated, reserved, inactive split bytes (fragmentation), alloc retries (each a
    cache flush and a synchronization), OOMs. Returns the values recorded."""
    torch = _torch()
    if not torch.cuda.is_available():
        raise FeatureUnavailable("CUDA is not available: no caching-allocator statistics")
    stats = torch.cuda.memory_stats(device)
    values = {}
    for name, key in ALLOCATOR_COUNTERS:
        if key in stats:
            values[name] = float(stats[key])
            _core.counter(name, values[name], "alloc")
    return values
