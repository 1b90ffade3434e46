"""PyTorch integration: module ranges, optimizer steps, CUDA caching-allocator statistics, the
torch.compile observer, compiled-vs-eager numerics, the comparison of compile modes and the wait
for data, one module each (modules, allocator, compile, numerics, modes, data).

Importing this package does not import torch; each function imports it when called and says
clearly (``FeatureUnavailable``) what the installed torch lacks. Private torch APIs are
feature-detected, never assumed.
"""
from gpuprobe.torch._common import FeatureUnavailable
from gpuprobe.torch.allocator import ALLOCATOR_COUNTERS, record_allocator_stats
from gpuprobe.torch.compile import CompileReport, CompileWatcher, graph_break_summary, watch_compile
from gpuprobe.torch.data import instrument_dataloader
from gpuprobe.torch.modes import ModeComparison, ModeResult, compare_modes
from gpuprobe.torch.modules import instrument, instrument_optimizer, step
from gpuprobe.torch.numerics import Comparison, compare

__all__ = [
    "FeatureUnavailable", "instrument", "instrument_optimizer", "step", "record_allocator_stats",
    "ALLOCATOR_COUNTERS", "watch_compile", "CompileWatcher", "CompileReport",
    "graph_break_summary", "compare", "Comparison", "compare_modes", "ModeComparison",
    "ModeResult", "instrument_dataloader",
]
