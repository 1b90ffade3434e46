"""What every part of gpuprobe.torch shares: importing torch on demand, and the error for what the
installed torch lacks."""


class FeatureUnavailable(RuntimeError):
    """The installed torch does not offer what a gpuprobe.torch feature needs."""


def _torch():
    try:
        import torch
    except ImportError as e:
        raise FeatureUnavailable("gpuprobe.torch needs PyTorch (pip install torch)") from e
    return torch
