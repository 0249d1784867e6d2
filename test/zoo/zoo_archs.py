"""The architectures of the model zoo: tiny random configs and the facts a test needs.

Imported by make_zoo.py under either generator environment (torch 1.13 with
transformers 4.4x, or torch 2.x with transformers 5.x), so every config is
written with keyword names both generations accept, and the facts recorded for
a model are checked against the config the model was actually built from.

Common sizes: hidden 64, 2 layers, 4 attention heads of 16, intermediate 128,
vocabulary 256, 64 positions. Every dim is divisible by 4 so tp=4 can split
heads and FFNs (kv heads excepted where the architecture has fewer).
"""

HIDDEN = 64
LAYERS = 2
HEADS = 4
HEAD_DIM = 16
INTER = 128
VOCAB = 256
MAX_POS = 64
EXPERT_INTER = 32  # MoE experts' intermediate size (4 experts of 32 keep a file < 1 MB)

BATCH = 2
SEQ = 16
PAD = 5  # row 1 has this many padding positions (left for decoders, right for encoders)

# Vision and audio encoders.
IMAGE = 32  # ViT: 32x32 images, 8x8 patches -> 16 patches + CLS
PATCH = 8
MEL_BINS = 80  # Whisper: 80 mel bins, max_source_positions 16 -> 32 input frames
AUDIO_POS = 16


def _attn(kind, heads=HEADS, kv=HEADS, head_dim=HEAD_DIM, causal=True, sliding_window=None):
    return {"kind": kind, "num_heads": heads, "kv_heads": kv, "head_dim": head_dim,
            "causal": causal, "sliding_window": sliding_window}


class Arch:
    """One zoo entry: how to build the model and what a test may rely on.

    name        file stem (`models/<name>.<exporter>.onnx`)
    family      the Hugging Face architecture (model_type)
    hf_class    the transformers class built
    config      (class name, kwargs) of the config
    inputs      "tokens" (input_ids + attention_mask), "pixels" or "audio"
    kind        "decoder" or "encoder"
    facts       architecture facts recorded in zoo.json
    check       callable(config) -> list of mismatches between facts and config
    build_kwargs attn_implementation (given to the config) and keyword arguments of
                the model's constructor
    seed        name the weights and feeds derive from (llama-eager shares llama's)
    """

    def __init__(self, name, family, hf_class, config_class, config, inputs, kind, facts,
                 check=None, build_kwargs=None, token_type_ids=False, pad_token_id=0,
                 config_v5=None, seed=None):
        self.name = name
        self.family = family
        self.hf_class = hf_class
        self.config_class = config_class
        self.config = config
        self.config_v5 = config_v5 or {}
        self.inputs = inputs
        self.kind = kind
        self.facts = facts
        self.check = check
        self.build_kwargs = build_kwargs or {}
        self.token_type_ids = token_type_ids
        self.pad_token_id = pad_token_id
        self.seed = seed or name  # weights and feeds derive from this name


def _facts(attention, position, norm, parallel_residual=False, moe=None, mlp=None,
           qkv="separate", notes=None):
    return {
        "num_layers": LAYERS,
        "hidden_size": HIDDEN,
        "attention": attention,
        "parallel_residual": parallel_residual,
        "position": position,
        "norm": norm,
        "mlp": mlp,
        "qkv": qkv,
        "moe": moe,
        # Megatron-LM tensor parallelism: one all-reduce after attention's output
        # projection and one after the MLP's down projection; a parallel-residual
        # block adds both branches to the same residual, so one all-reduce suffices.
        "tp_allreduces_per_layer": 1 if parallel_residual else 2,
        "notes": notes or [],
    }


_COMMON_DECODER = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                       num_attention_heads=HEADS, intermediate_size=INTER,
                       max_position_embeddings=MAX_POS, pad_token_id=0, bos_token_id=1,
                       eos_token_id=2)


def _llama_like(num_kv, **extra):
    cfg = dict(_COMMON_DECODER, num_key_value_heads=num_kv, **extra)
    return cfg


ARCHS = [
    Arch("gpt2", "gpt2", "GPT2LMHeadModel", "GPT2Config",
         dict(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_inner=INTER,
              n_positions=MAX_POS, pad_token_id=0, bos_token_id=1, eos_token_id=2),
         "tokens", "decoder",
         _facts(_attn("mha"), {"scheme": "learned"}, "layer_norm", mlp="gelu_new",
                qkv="fused (Conv1D c_attn, weight [in, 3*hidden])",
                notes=["lm_head tied to wte"])),
    Arch("llama", "llama", "LlamaForCausalLM", "LlamaConfig", _llama_like(2),
         "tokens", "decoder",
         _facts(_attn("gqa", kv=2), {"scheme": "rotary_half", "rotary_dim": HEAD_DIM},
                "rms_norm", mlp="swiglu")),
    Arch("llama-eager", "llama", "LlamaForCausalLM", "LlamaConfig", _llama_like(2),
         "tokens", "decoder",
         _facts(_attn("gqa", kv=2), {"scheme": "rotary_half", "rotary_dim": HEAD_DIM},
                "rms_norm", mlp="swiglu", notes=["attn_implementation='eager' variant of llama"]),
         build_kwargs={"attn_implementation": "eager"}, seed="llama"),
    Arch("mistral", "mistral", "MistralForCausalLM", "MistralConfig",
         _llama_like(2, sliding_window=8, head_dim=HEAD_DIM), "tokens", "decoder",
         _facts(_attn("gqa", kv=2, sliding_window=8),
                {"scheme": "rotary_half", "rotary_dim": HEAD_DIM}, "rms_norm", mlp="swiglu",
                notes=["sliding_window 8 < sequence 16: keys older than 8 positions are masked"])),
    Arch("qwen2", "qwen2", "Qwen2ForCausalLM", "Qwen2Config", _llama_like(2),
         "tokens", "decoder",
         _facts(_attn("gqa", kv=2), {"scheme": "rotary_half", "rotary_dim": HEAD_DIM},
                "rms_norm", mlp="swiglu", notes=["q, k, v projections have biases, o has none"])),
    Arch("phi", "phi", "PhiForCausalLM", "PhiConfig",
         dict(_COMMON_DECODER, num_key_value_heads=HEADS, partial_rotary_factor=0.5),
         "tokens", "decoder",
         _facts(_attn("mha"), {"scheme": "partial_rotary", "style": "half",
                               "rotary_dim": HEAD_DIM // 2},
                "layer_norm", parallel_residual=True, mlp="gelu_new",
                notes=["one input_layernorm feeds attention and MLP; lm_head has a bias"])),
    Arch("gemma", "gemma", "GemmaForCausalLM", "GemmaConfig",
         _llama_like(1, head_dim=HEAD_DIM), "tokens", "decoder",
         _facts(_attn("mqa", kv=1), {"scheme": "rotary_half", "rotary_dim": HEAD_DIM},
                "rms_norm (x * (1 + w))", mlp="geglu (gelu tanh)",
                notes=["embeddings scaled by sqrt(hidden)", "lm_head tied to embed_tokens",
                       "one kv head (gemma-2b style): kv projections cannot be split over tp"])),
    Arch("gpt_neox", "gpt_neox", "GPTNeoXForCausalLM", "GPTNeoXConfig",
         dict(_COMMON_DECODER, rotary_pct=0.25, use_parallel_residual=True),
         "tokens", "decoder",
         _facts(_attn("mha"), {"scheme": "partial_rotary", "style": "half",
                               "rotary_dim": HEAD_DIM // 4},
                "layer_norm", parallel_residual=True, mlp="gelu",
                qkv="fused (query_key_value, per-head interleaved [h, 3, d] rows)",
                notes=["separate layernorms for attention and MLP, both read the block input"]),
         config_v5={"rotary_pct": None, "partial_rotary_factor": 0.25}),
    Arch("gptj", "gptj", "GPTJForCausalLM", "GPTJConfig",
         dict(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_inner=INTER,
              n_positions=MAX_POS, rotary_dim=HEAD_DIM // 2, pad_token_id=0, bos_token_id=1,
              eos_token_id=2),
         "tokens", "decoder",
         _facts(_attn("mha"), {"scheme": "rotary_interleaved", "style": "interleaved",
                               "rotary_dim": HEAD_DIM // 2},
                "layer_norm", parallel_residual=True, mlp="gelu_new",
                notes=["partial interleaved rotary (8 of 16 dims, like GPT-J-6B's 64 of 256)",
                       "q, k, v, out projections without bias; lm_head has a bias"])),
    Arch("falcon", "falcon", "FalconForCausalLM", "FalconConfig",
         dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
              num_attention_heads=HEADS, multi_query=True, parallel_attn=True,
              new_decoder_architecture=False, alibi=False, bias=False, ffn_hidden_size=INTER,
              max_position_embeddings=MAX_POS, pad_token_id=0, bos_token_id=1, eos_token_id=2),
         "tokens", "decoder",
         _facts(_attn("mqa", kv=1), {"scheme": "rotary_half", "rotary_dim": HEAD_DIM},
                "layer_norm", parallel_residual=True, mlp="gelu",
                qkv="fused (query_key_value: 4 q heads then 1 k and 1 v head)",
                notes=["falcon-7b style: multi_query, parallel_attn, no biases"])),
    Arch("bloom", "bloom", "BloomForCausalLM", "BloomConfig",
         dict(vocab_size=VOCAB, hidden_size=HIDDEN, n_layer=LAYERS, n_head=HEADS,
              pad_token_id=0, bos_token_id=1, eos_token_id=2),
         "tokens", "decoder",
         _facts(_attn("mha"), {"scheme": "alibi"}, "layer_norm", mlp="gelu (4*hidden = 256)",
                qkv="fused (query_key_value, per-head interleaved [h, 3, d] rows)",
                notes=["word_embeddings_layernorm after the embedding",
                       "Bloom's MLP is 4*hidden wide (no config for it): 256",
                       "lm_head tied to word_embeddings"])),
    Arch("opt", "opt", "OPTForCausalLM", "OPTConfig",
         dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
              num_attention_heads=HEADS, ffn_dim=INTER, word_embed_proj_dim=HIDDEN,
              max_position_embeddings=MAX_POS, pad_token_id=0, bos_token_id=1, eos_token_id=2),
         "tokens", "decoder",
         _facts(_attn("mha"), {"scheme": "learned", "offset": 2,
                               "from": "cumsum(attention_mask) - 1"},
                "layer_norm", mlp="relu", notes=["lm_head tied to embed_tokens"])),
    Arch("bert", "bert", "BertModel", "BertConfig",
         dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
              num_attention_heads=HEADS, intermediate_size=INTER,
              max_position_embeddings=MAX_POS, pad_token_id=0),
         "tokens", "encoder",
         _facts(_attn("mha", causal=False), {"scheme": "learned", "token_type": True},
                "layer_norm (post-norm)", mlp="gelu",
                notes=["inputs include token_type_ids", "pooler not exported (last_hidden_state only)"]),
         token_type_ids=True, build_kwargs={"add_pooling_layer": False}),
    Arch("roberta", "roberta", "RobertaModel", "RobertaConfig",
         dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
              num_attention_heads=HEADS, intermediate_size=INTER,
              max_position_embeddings=MAX_POS + 2, pad_token_id=1, bos_token_id=0,
              eos_token_id=2),
         "tokens", "encoder",
         _facts(_attn("mha", causal=False),
                {"scheme": "learned", "offset": 2,
                 "from": "cumsum(input_ids != pad) * (input_ids != pad) + pad"},
                "layer_norm (post-norm)", mlp="gelu",
                notes=["max_position_embeddings 66 = 64 + padding_idx + 1"]),
         pad_token_id=1, build_kwargs={"add_pooling_layer": False}),
    Arch("distilbert", "distilbert", "DistilBertModel", "DistilBertConfig",
         dict(vocab_size=VOCAB, dim=HIDDEN, n_layers=LAYERS, n_heads=HEADS, hidden_dim=INTER,
              max_position_embeddings=MAX_POS, pad_token_id=0),
         "tokens", "encoder",
         _facts(_attn("mha", causal=False), {"scheme": "learned"}, "layer_norm (post-norm)",
                mlp="gelu")),
    Arch("t5_encoder", "t5", "T5EncoderModel", "T5Config",
         dict(vocab_size=VOCAB, d_model=HIDDEN, d_kv=HEAD_DIM, num_heads=HEADS, d_ff=INTER,
              num_layers=LAYERS, relative_attention_num_buckets=32,
              relative_attention_max_distance=64, feed_forward_proj="relu", pad_token_id=0),
         "tokens", "encoder",
         _facts(_attn("mha", causal=False),
                {"scheme": "relative_bias", "buckets": 32, "max_distance": 64,
                 "bidirectional": True},
                "rms_norm (T5LayerNorm, no bias)", mlp="relu",
                notes=["relative position bias computed once in layer 0 and reused",
                       "no biases in linear layers; attention not scaled by 1/sqrt(d)"])),
    Arch("vit", "vit", "ViTModel", "ViTConfig",
         dict(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
              intermediate_size=INTER, image_size=IMAGE, patch_size=PATCH, num_channels=3),
         "pixels", "encoder",
         _facts(_attn("mha", causal=False), {"scheme": "learned"}, "layer_norm (pre-norm)",
                mlp="gelu",
                notes=["patch embedding is a Conv 8x8 stride 8; 16 patches + CLS = 17 tokens",
                       "no attention mask", "pooler not exported"]),
         build_kwargs={"add_pooling_layer": False}),
    Arch("whisper_encoder", "whisper", "WhisperEncoder", "WhisperConfig",
         dict(vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=LAYERS,
              encoder_attention_heads=HEADS, encoder_ffn_dim=INTER, decoder_layers=LAYERS,
              decoder_attention_heads=HEADS, decoder_ffn_dim=INTER, num_mel_bins=MEL_BINS,
              max_source_positions=AUDIO_POS, max_target_positions=MAX_POS,
              pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1),
         "audio", "encoder",
         _facts(_attn("mha", causal=False), {"scheme": "learned (sinusoidal init)"},
                "layer_norm (pre-norm)", mlp="gelu",
                notes=["two Conv1d (k=3, second stride 2): 32 frames -> 16 positions",
                       "input frames must be 2*max_source_positions = 32 (checked by the model)",
                       "k_proj has no bias", "no attention mask"])),
    Arch("mixtral", "mixtral", "MixtralForCausalLM", "MixtralConfig",
         dict(_COMMON_DECODER, num_key_value_heads=2, num_local_experts=4,
              num_experts_per_tok=2, intermediate_size=EXPERT_INTER, sliding_window=None,
              head_dim=HEAD_DIM),
         "tokens", "decoder",
         _facts(_attn("gqa", kv=2), {"scheme": "rotary_half", "rotary_dim": HEAD_DIM},
                "rms_norm", mlp="swiglu experts (intermediate 32)",
                moe={"experts": 4, "top_k": 2, "shared_experts": 0,
                     "expert_intermediate": EXPERT_INTER,
                     "router": "softmax then top-k, renormalized"},
                notes=["expert intermediate 32 (not 128) keeps the file well under 1 MB"])),
    Arch("qwen2_moe", "qwen2_moe", "Qwen2MoeForCausalLM", "Qwen2MoeConfig",
         dict(_COMMON_DECODER, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
              moe_intermediate_size=EXPERT_INTER, shared_expert_intermediate_size=2 * EXPERT_INTER,
              decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=False),
         "tokens", "decoder",
         _facts(_attn("gqa", kv=2), {"scheme": "rotary_half", "rotary_dim": HEAD_DIM},
                "rms_norm", mlp="swiglu experts (intermediate 32) + shared expert (64)",
                moe={"experts": 4, "top_k": 2, "shared_experts": 1,
                     "expert_intermediate": EXPERT_INTER,
                     "shared_expert_intermediate": 2 * EXPERT_INTER,
                     "shared_expert_gate": "sigmoid(Linear(hidden, 1))",
                     "router": "softmax then top-k, not renormalized"},
                notes=["q, k, v projections have biases"])),
]

BY_NAME = {a.name: a for a in ARCHS}
