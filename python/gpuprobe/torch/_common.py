"""What every part of gpuprobe.torch shares: importing torch on demand, the error for what the
installed torch lacks, and the names of the events it records (the report reads them)."""
from gpuprobe import _core

# The event names, from the C++ side's one list (lib/formats/framework_events.h), never retyped.
EVENTS = _core.event_names


class FeatureUnavailable(RuntimeError):
    """The installed torch does not offer what a gpuprobe.torch feature needs."""


def _torch():
    try:
        import torch
    except ImportError as e:
        raise FeatureUnavailable("gpuprobe.torch needs PyTorch (pip install torch)") from e
    return torch
