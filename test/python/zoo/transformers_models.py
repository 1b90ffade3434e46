"""transformers architectures built from tiny configurations (2 layers, hidden size 32, 4 heads,
vocabulary 128; no download): random weights, token (or image) inputs of batch 2."""
from zoo.spec import Spec, image_inputs, token_inputs

VOCAB = 128
# Shared sizes, in each config's own names (set where the config has that name).
_SIZES = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=64, max_position_embeddings=64, use_cache=False)

# (name, family, config class, model class, config overrides, inputs)
MODELS = [
    ("bert", "bert", "BertConfig", "BertForSequenceClassification", {"num_labels": 3}, "tokens"),
    ("distilbert", "distilbert", "DistilBertConfig", "DistilBertForSequenceClassification",
     {"dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64, "num_labels": 3}, "tokens"),
    ("gpt2", "gpt2", "GPT2Config", "GPT2LMHeadModel",
     {"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64, "bos_token_id": 0,
      "eos_token_id": 0}, "tokens"),
    ("t5", "t5", "T5Config", "T5ForConditionalGeneration",
     {"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_decoder_layers": 2,
      "num_heads": 4}, "encoder-decoder"),
    ("llama", "llama", "LlamaConfig", "LlamaForCausalLM", {"num_key_value_heads": 2}, "tokens"),
    ("qwen2", "qwen2", "Qwen2Config", "Qwen2ForCausalLM", {"num_key_value_heads": 2}, "tokens"),
    ("vit", "vit", "ViTConfig", "ViTForImageClassification",
     {"image_size": 32, "patch_size": 8, "num_labels": 10}, "image"),
]


def _builder(config_class, model_class, overrides):
    def build():
        import transformers

        config_type = getattr(transformers, config_class)
        sizes = {k: v for k, v in _SIZES.items() if k in config_type().to_dict() or
                 hasattr(config_type(), k)}
        config = config_type(**sizes, **overrides)
        return getattr(transformers, model_class)(config)

    return build


def models():
    """The transformers zoo: one Spec per architecture in MODELS."""
    specs = []
    for name, family, config_class, model_class, overrides, kind in MODELS:
        inputs = (image_inputs(32) if kind == "image" else
                  token_inputs(VOCAB, decoder=kind == "encoder-decoder"))
        specs.append(Spec(f"transformers/{name}", family,
                          _builder(config_class, model_class, overrides), inputs,
                          f"{model_class}, tiny config (2 layers, hidden 32)"))
    return specs
