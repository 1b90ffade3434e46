"""Every torchvision classification model (``torchvision.models.list_models(module=
torchvision.models)``), at a small image on the CPU: 32 px, batch 2, 10 classes, unless a model
needs otherwise (SIZES, KWARGS, the MaxViT builder)."""
import re

from zoo.spec import Spec, image_inputs

NUM_CLASSES = 10
DEFAULT_SIZE = 32

# Models that need a larger image than 32 px, and why.
SIZES = {
    "alexnet": (64, "64 px: its third max-pool needs a 3x3 map"),
    "inception_v3": (75, "75 px, its smallest"),
    "maxvit_t": (64, "64 px"),
}
# Constructor arguments beyond num_classes, and why.
KWARGS = {
    "googlenet": ({"init_weights": True}, "init_weights=True (the default, without its warning)"),
    "inception_v3": ({"init_weights": True, "aux_logits": False},
                     "aux_logits=False (the auxiliary head needs 299 px), init_weights=True"),
    "vit_b_16": ({"image_size": 32}, "image_size=32 (2x2 patches)"),
    "vit_b_32": ({"image_size": 32}, "image_size=32 (1 patch)"),
    "vit_l_16": ({"image_size": 32}, "image_size=32 (2x2 patches)"),
    "vit_l_32": ({"image_size": 32}, "image_size=32 (1 patch)"),
    "vit_h_14": ({"image_size": 28}, "image_size=28 (2x2 patches)"),
}
# Left out of CI: parameters (millions, at 10 classes) past what a 2-core CI runner holds in
# its several copies (the initial weights, each run's model, gradients and their copies) and
# trains in seconds: the 12 over 100 M took 166 s of the zoo's 815 on the dev VM (vgg's 8 are
# all of one family); GPUPROBE_ZOO=full runs them.
HEAVY_PARAMS_M = 100


def _maxvit_t():
    # maxvit_t's own configuration, but 2x2 partitions: its 7x7 windows and grids need a
    # 224 px image (7 x 32); torchvision's builder fixes partition_size.
    from torchvision.models.maxvit import MaxVit

    return MaxVit(input_size=(64, 64), stem_channels=64, partition_size=2,
                  block_channels=[64, 128, 256, 512], block_layers=[2, 2, 5, 2], head_dim=32,
                  stochastic_depth_prob=0.2, num_classes=NUM_CLASSES)


def _builder(name, kwargs):
    def build():
        if name == "maxvit_t":
            return _maxvit_t()
        import torchvision

        return torchvision.models.get_model(name, weights=None, num_classes=NUM_CLASSES, **kwargs)

    return build


# Parameter counts (millions, 10 classes) of the models over 30 M, measured with torchvision
# 0.29, so that listing the zoo builds nothing.
_PARAMS_M = {
    "alexnet": 57.0,
    "convnext_base": 87.6,
    "convnext_large": 196.2,
    "convnext_small": 49.5,
    "efficientnet_b6": 40.8,
    "efficientnet_b7": 63.8,
    "efficientnet_v2_l": 117.2,
    "efficientnet_v2_m": 52.9,
    "maxvit_t": 30.4,
    "regnet_x_16gf": 52.3,
    "regnet_x_32gf": 105.3,
    "regnet_x_8gf": 37.7,
    "regnet_y_128gf": 637.5,
    "regnet_y_16gf": 80.6,
    "regnet_y_32gf": 141.4,
    "regnet_y_8gf": 37.4,
    "resnet101": 42.5,
    "resnet152": 58.2,
    "resnext101_32x8d": 86.8,
    "resnext101_64x4d": 81.4,
    "swin_b": 86.8,
    "swin_s": 48.8,
    "swin_v2_b": 86.9,
    "swin_v2_s": 49.0,
    "vgg11": 128.8,
    "vgg11_bn": 128.8,
    "vgg13": 129.0,
    "vgg13_bn": 129.0,
    "vgg16": 134.3,
    "vgg16_bn": 134.3,
    "vgg19": 139.6,
    "vgg19_bn": 139.6,
    "vit_b_16": 85.7,
    "vit_b_32": 87.4,
    "vit_h_14": 630.5,
    "vit_l_16": 303.1,
    "vit_l_32": 305.5,
    "wide_resnet101_2": 124.9,
    "wide_resnet50_2": 66.9,
}


def models():
    """The torchvision zoo: one Spec per classification model."""
    import torchvision

    specs = []
    for name in torchvision.models.list_models(module=torchvision.models):
        size, size_note = SIZES.get(name, (DEFAULT_SIZE, ""))
        kwargs, kwargs_note = KWARGS.get(name, ({}, ""))
        notes = [n for n in (size_note, kwargs_note) if n]
        if name == "maxvit_t":
            notes.append("partition_size=2 (maxvit_t's 7 needs 224 px)")
        params = _PARAMS_M.get(name, 0)
        heavy = (f"{params:.0f} M parameters (> {HEAVY_PARAMS_M} M): too slow and large for CI"
                 if params > HEAVY_PARAMS_M else None)
        family = re.match("[a-z]+", name).group(0)
        specs.append(Spec(f"torchvision/{name}", family, _builder(name, kwargs),
                          image_inputs(size), "; ".join(notes), heavy))
    return specs
