"""The wait for data: `instrument_dataloader(loader)` wraps a DataLoader (or any iterable of
batches) so that each fetch of the next batch is a range "dataloader next" (category torch) —
the time a training or inference step waits for its input, which `gpuprobe report` gives per
batch (P50, P99) and names in its verdict when the steps spend most of their time in it."""
from gpuprobe import _core
from gpuprobe.torch._common import EVENTS


class _Iterator:
    __slots__ = ("_it",)

    def __init__(self, it):
        self._it = it

    def __iter__(self):
        return self

    def __next__(self):
        token = _core._begin(EVENTS["data_wait"], "torch")
        try:
            return next(self._it)
        finally:
            _core._end(token)


class InstrumentedLoader:
    """Iterates as the wrapped loader does; everything else (len, dataset, batch_size, ...) is
    the loader's."""

    def __init__(self, loader):
        self._loader = loader

    def __iter__(self):
        return _Iterator(iter(self._loader))

    def __len__(self):
        return len(self._loader)

    def __getattr__(self, name):
        return getattr(self._loader, name)


def instrument_dataloader(loader):
    """`loader` with each fetch of a batch recorded as a range "dataloader next"."""
    return InstrumentedLoader(loader)
