"""One zoo model: how to build it, the inputs it runs on, and where it deviates from its
defaults (a smaller image, fewer classes, a setting that makes that image work)."""
import dataclasses
from typing import Callable, Optional


@dataclasses.dataclass
class Spec:
    """A zoo model. ``build()`` returns a freshly initialised ``torch.nn.Module`` (the caller
    seeds the RNG first); ``inputs()`` returns ``(args, kwargs)`` for its forward, the same each
    call under the same seed. ``note`` says how the model deviates from its library's defaults;
    ``heavy`` names why it is left out of CI (memory or time), None when it runs there."""

    name: str  # "<library>/<model>", e.g. "torchvision/resnet18"
    family: str  # the architecture family, e.g. "resnet", "vit"
    build: Callable
    inputs: Callable
    note: str = ""
    heavy: Optional[str] = None

    @property
    def library(self):
        return self.name.split("/", 1)[0]

    @property
    def short(self):
        return self.name.split("/", 1)[1]


def image_inputs(size, batch=2, channels=3):
    """An ``inputs`` function: a batch of random images ``size`` x ``size``."""
    def make():
        import torch

        return (torch.randn(batch, channels, size, size),), {}

    return make


def token_inputs(vocab, length=16, batch=2, decoder=False):
    """An ``inputs`` function: random token ids (``input_ids``, and ``decoder_input_ids`` for
    encoder-decoder models)."""
    def make():
        import torch

        kwargs = {"input_ids": torch.randint(0, vocab, (batch, length))}
        if decoder:
            kwargs["decoder_input_ids"] = torch.randint(0, vocab, (batch, length // 2))
        return (), kwargs

    return make
