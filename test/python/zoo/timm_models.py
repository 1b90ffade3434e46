"""timm models of different families, small variants, random weights (``pretrained=False``),
10 classes, at a small image on the CPU: 32 px unless the model needs more (MODELS)."""
from zoo.spec import Spec, image_inputs

NUM_CLASSES = 10

# (timm name, family, image size, create_model arguments, why they deviate from the defaults)
MODELS = [
    ("resnet18", "resnet", 32, {}, ""),
    ("efficientnet_b0", "efficientnet", 32, {}, ""),
    ("mobilenetv3_small_050", "mobilenetv3", 32, {}, ""),
    ("mobilenetv4_conv_small", "mobilenetv4", 32, {}, ""),
    ("convnext_atto", "convnext", 32, {}, ""),
    ("vit_tiny_patch16_224", "vit", 32, {"img_size": 32}, "img_size=32"),
    ("deit_tiny_patch16_224", "deit", 32, {"img_size": 32}, "img_size=32"),
    ("swin_tiny_patch4_window7_224", "swin", 64, {"img_size": 64, "window_size": 2},
     "img_size=64, window_size=2 (7x7 windows need 224 px)"),
    ("regnetx_002", "regnet", 32, {}, ""),
    ("densenet121", "densenet", 32, {}, ""),
    ("ghostnet_050", "ghostnet", 32, {}, ""),
    ("levit_128s", "levit", 64, {"img_size": 64}, "img_size=64"),
    ("mixer_s32_224", "mixer", 64, {"img_size": 64}, "img_size=64"),
    ("poolformer_s12", "poolformer", 32, {}, ""),
    ("coat_lite_tiny", "coat", 64, {"img_size": 64}, "img_size=64"),
    ("cait_xxs24_224", "cait", 32, {"img_size": 32}, "img_size=32"),
    ("edgenext_xx_small", "edgenext", 64, {}, "64 px"),
    ("rexnet_100", "rexnet", 32, {}, ""),
    ("dla46_c", "dla", 32, {}, ""),
    ("hrnet_w18_small", "hrnet", 64, {}, "64 px"),
    ("mobilevit_xxs", "mobilevit", 64, {}, "64 px"),
    ("efficientvit_b0", "efficientvit", 64, {}, "64 px"),
    ("fastvit_t8", "fastvit", 64, {}, "64 px"),
    ("repvgg_a0", "repvgg", 32, {}, ""),
    ("lcnet_050", "lcnet", 32, {}, ""),
    ("pvt_v2_b0", "pvt", 64, {}, "64 px"),
    ("tiny_vit_5m_224", "tiny_vit", 64, {}, "64 px"),
]


def _builder(name, kwargs):
    def build():
        import timm

        return timm.create_model(name, pretrained=False, num_classes=NUM_CLASSES, **kwargs)

    return build


def models():
    """The timm zoo: one Spec per model in MODELS."""
    return [Spec(f"timm/{name}", family, _builder(name, kwargs), image_inputs(size), note)
            for name, family, size, kwargs, note in MODELS]
