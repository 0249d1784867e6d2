#!/usr/bin/env python3
"""Generate the model zoo: Hugging Face architectures with tiny random configs,
exported to ONNX by torch's TorchScript exporter or by its dynamo exporter.

    .venv-zoo-ts/bin/python test/zoo/make_zoo.py          # torch 1.13 -> TorchScript
    .venv-zoo-dynamo/bin/python test/zoo/make_zoo.py      # torch 2.x  -> dynamo
    ... make_zoo.py --only llama,gpt2                     # a few architectures

(`make zoo` installs both environments and runs both.) The exporter follows the
torch version of the interpreter: torch 1.x has only the TorchScript exporter;
torch 2.x is run with `dynamo=True`, its default.

For every architecture of zoo_archs.py the model is built from its config with
the library's default attention implementation, put in eval mode, and given
deterministic weights: every matrix N(0, 0.1) (so attention scores are O(1) and
a wrong mask or rotary shows), every bias and every norm weight/bias moved away
from 0/1 by N(0, 0.1) (so a dropped bias shows). It is exported with padded
inputs (batch 2, sequence 16, row 1 padded by 5: decoders on the left as in
generation, encoders on the right) and dynamic batch and sequence axes.

Written per model, under test/zoo/models/:
  <name>.<exporter>.onnx      the export, weights embedded
  <name>.<exporter>.npz       the exact feeds, by ONNX input name (shardrun --inputs)
  <name>.<exporter>.out.npz   torch's outputs for those feeds, by ONNX output name

onnxruntime then runs the export (ort_check.py, in the project venv, since the
generator environments have no onnxruntime) and a model is kept only when
max|ort - torch| <= 1e-4 * max|torch| (for a decoder, over its real tokens
when only left-padded positions differ: see judge()). It is also run on a
second shape (ALT_SHAPE) against torch, recorded as other_shape_check, to show
the dynamic axes hold. zoo.json is updated: this exporter's entries are
replaced, the other exporter's kept.
"""

import argparse
import json
import os
import subprocess
import sys
import traceback
import warnings
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zoo_archs as Z  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(HERE, "models")
ZOO_JSON = os.path.join(HERE, "zoo.json")
ORT_PYTHON = os.environ.get("ORT_PYTHON", os.path.join(REPO, ".venv", "bin", "python"))
REL_TOL = 1e-4
TORCHSCRIPT_OPSET = 17

warnings.filterwarnings("ignore")


def version_tuple(v):
    out = []
    for part in v.split("+")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
        if not part.isdigit():
            break
    return tuple(out)


TORCH_VERSION = version_tuple(torch.__version__)
EXPORTER = "torchscript" if TORCH_VERSION < (2,) else "dynamo"


def seed_of(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# ---------------------------------------------------------------------------
# Building


def build_model(arch, tf):
    major = version_tuple(tf.__version__)[0]
    kwargs = dict(arch.config)
    if major >= 5:
        for k, v in arch.config_v5.items():
            if v is None:
                kwargs.pop(k, None)
            else:
                kwargs[k] = v
    if "attn_implementation" in arch.build_kwargs:
        kwargs["attn_implementation"] = arch.build_kwargs["attn_implementation"]
    if arch.facts["moe"] and major >= 5:
        # transformers 5's default experts implementation (grouped_mm, a custom op
        # torch.onnx has no translation for) does not export; batched_mm does.
        kwargs["experts_implementation"] = "batched_mm"
    config = getattr(tf, arch.config_class)(**kwargs)
    init = {k: v for k, v in arch.build_kwargs.items() if k != "attn_implementation"}
    torch.manual_seed(seed_of(arch.seed))
    if arch.hf_class == "WhisperEncoder":
        from transformers.models.whisper.modeling_whisper import WhisperEncoder
        model = WhisperEncoder(config, **init)
    else:
        model = getattr(tf, arch.hf_class)(config, **init)
    model.eval()
    perturb(model, seed_of(arch.seed) + 1)
    return model, config


def perturb(model, seed):
    """Matrices N(0, 0.1); biases and norm parameters (every 1-D parameter) + N(0, 0.1).

    Each parameter draws from its own generator, seeded by the model's seed and
    the parameter's name, so both transformers generations give a parameter of
    the same name and shape the same values whatever order they list them in."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            gen = torch.Generator().manual_seed(seed ^ zlib.crc32(name.encode()))
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32).to(p.dtype)
            if p.dim() >= 2:
                p.copy_(0.1 * noise)
            else:
                p.add_(0.1 * noise)


def attn_implementation(model, config):
    impl = getattr(config, "_attn_implementation", None)
    return impl or "eager"


# ---------------------------------------------------------------------------
# Inputs and wrappers


def make_feeds(arch, batch=Z.BATCH, seq=Z.SEQ, pads=((1, Z.PAD),), seed_offset=2):
    """Feeds of shape [batch, seq]; pads: (row, padded positions) pairs."""
    rng = np.random.RandomState(seed_of(arch.seed) + seed_offset)
    if arch.inputs == "pixels":
        return {"pixel_values": rng.randn(batch, 3, Z.IMAGE, Z.IMAGE).astype(np.float32)}
    if arch.inputs == "audio":
        return {"input_features": rng.randn(batch, Z.MEL_BINS, 2 * Z.AUDIO_POS).astype(np.float32)}
    ids = rng.randint(3, Z.VOCAB, size=(batch, seq)).astype(np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    tt = np.zeros((batch, seq), dtype=np.int64)
    tt[:, seq // 2:] = 1
    for row, n in pads:
        pad = slice(0, n) if arch.kind == "decoder" else slice(seq - n, seq)
        mask[row, pad] = 0
        ids[row, pad] = arch.pad_token_id
        tt[row, pad] = 0
    feeds = {"input_ids": ids, "attention_mask": mask}
    if arch.token_type_ids:
        feeds["token_type_ids"] = tt
    return feeds


# A second shape the export must also get right (its axes really dynamic):
# batch 3, sequence 11, rows 0 and 2 padded by 2 and 7.
ALT_SHAPE = dict(batch=3, seq=11, pads=((0, 2), (2, 7)), seed_offset=3)


class CausalLM(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          use_cache=False).logits


class TextEncoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class TextEncoderTT(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state


class PixelEncoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values).last_hidden_state


class AudioEncoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_features):
        return self.model(input_features=input_features).last_hidden_state


def wrap(arch, model):
    w, output = _wrap(arch, model)
    # eval() on the wrapper too: an exporter restores the training flag of the
    # module it was given, recursively, so a wrapper left in training mode would
    # put the model back into training mode (dropout on) after the export.
    return w.eval(), output


def _wrap(arch, model):
    if arch.inputs == "pixels":
        return PixelEncoder(model), "last_hidden_state"
    if arch.inputs == "audio":
        return AudioEncoder(model), "last_hidden_state"
    if arch.kind == "decoder":
        return CausalLM(model), "logits"
    if arch.token_type_ids:
        return TextEncoderTT(model), "last_hidden_state"
    return TextEncoder(model), "last_hidden_state"


def dynamic_axes(arch, feeds, output):
    """Axis names per input and output: batch always, sequence for token inputs."""
    axes = {}
    for name in feeds:
        axes[name] = {0: "batch", 1: "sequence"} if arch.inputs == "tokens" else {0: "batch"}
    axes[output] = {0: "batch", 1: "sequence"} if arch.inputs == "tokens" else {0: "batch"}
    return axes


# ---------------------------------------------------------------------------
# Export


def export(arch, wrapper, feeds, output, path):
    names = list(feeds)
    args = tuple(torch.from_numpy(feeds[n]) for n in names)
    axes = dynamic_axes(arch, feeds, output)
    if EXPORTER == "torchscript":
        def ts_export():
            torch.onnx.export(wrapper, args, path, input_names=names, output_names=[output],
                              dynamic_axes=axes, opset_version=TORCHSCRIPT_OPSET,
                              do_constant_folding=True)
        try:
            ts_export()
            return {}
        except Exception as e:  # noqa: BLE001
            if "aten::bitwise_or" not in str(e):
                raise
        # torch 1.13 has no ONNX symbolic for aten::bitwise_or (transformers 4.4x's
        # Mistral/Mixtral sliding-window mask ORs two bool masks); the usual user
        # workaround is to register one: on bool tensors it is ONNX Or.
        register_bitwise_or()
        ts_export()
        return {"export_workaround": "torch.onnx.register_custom_op_symbolic('aten::bitwise_or', "
                                     "Or on bool tensors, opset 17)"}
    from torch.export import Dim
    dims = {}
    shapes = {}
    for n in names:
        shapes[n] = {}
        for axis, dim_name in axes[n].items():
            if dim_name not in dims:
                dims[dim_name] = Dim(dim_name, min=1, max=Z.MAX_POS) if dim_name == "sequence" \
                    else Dim(dim_name, min=1, max=1024)
            shapes[n][axis] = dims[dim_name]
    torch.onnx.export(wrapper, args, path, input_names=names, output_names=[output],
                      dynamic_shapes=shapes, dynamo=True, external_data=False)
    return strip_stack_traces(path)


def strip_stack_traces(path):
    """Drop the exporter's per-node Python stack traces (metadata key
    pkg.torch.onnx.stack_trace): they name this machine's file paths and
    line numbers, not anything of the model, and are a quarter of the file.
    The other node metadata (namespace, class hierarchy, name scopes, fx node)
    is kept, as users' files have it."""
    import onnx
    model = onnx.load(path)
    removed = 0

    def strip(nodes):
        nonlocal removed
        for node in nodes:
            keep = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
            if len(keep) != len(node.metadata_props):
                removed += 1
                del node.metadata_props[:]
                node.metadata_props.extend(keep)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    strip(attr.g.node)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        strip(g.node)

    strip(model.graph.node)
    for f in model.functions:
        strip(f.node)
    onnx.save(model, path)
    return {"stripped_metadata": "pkg.torch.onnx.stack_trace"} if removed else {}


_BITWISE_OR_REGISTERED = False


def register_bitwise_or():
    global _BITWISE_OR_REGISTERED
    if _BITWISE_OR_REGISTERED:
        return

    def bitwise_or(g, a, b):
        for v in (a, b):
            t = v.type().scalarType() if hasattr(v.type(), "scalarType") else None
            if t not in (None, "Bool"):
                raise RuntimeError(f"aten::bitwise_or on {t} tensors: only bool is handled")
        return g.op("Or", a, b)

    torch.onnx.register_custom_op_symbolic("aten::bitwise_or", bitwise_or, TORCHSCRIPT_OPSET)
    _BITWISE_OR_REGISTERED = True


def save_npz(path, arrays):
    """np.savez with a fixed time stamp, so a regenerated file is byte-identical."""
    import zipfile
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.asarray(value), allow_pickle=False)


def run_ort_check(onnx_path, feeds_path, ref_path):
    proc = subprocess.run([ORT_PYTHON, os.path.join(HERE, "ort_check.py"), onnx_path, feeds_path,
                           ref_path], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("ort_check.py failed: " + proc.stderr.strip().splitlines()[-1]
                           if proc.stderr.strip() else "ort_check.py failed")
    return json.loads(proc.stdout)


# ---------------------------------------------------------------------------
# Facts checked against the built config


def _first(config, *names):
    for n in names:
        v = getattr(config, n, None)
        if v is not None:
            return v
    return None


def other_shape_check(arch, wrapper, output, onnx_path):
    """Run the export on ALT_SHAPE against torch: are the dynamic axes honest?"""
    import tempfile
    feeds = make_feeds(arch, **ALT_SHAPE)
    with torch.no_grad():
        ref = wrapper(*[torch.from_numpy(feeds[n]) for n in feeds]).numpy()
    with tempfile.TemporaryDirectory() as tmp:
        fp, rp = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        np.savez(fp, **feeds)
        np.savez(rp, **{output: ref})
        check = run_ort_check(onnx_path, fp, rp)
    shapes = {n: list(v.shape) for n, v in feeds.items()}
    if "error" in check:
        return {"shapes": shapes, "ok": False, "error": check["error"]}
    res = check["results"][0]
    if "error" in res:
        return {"shapes": shapes, "ok": False, "error": res["error"]}
    out = judge(arch, res)
    out["shapes"] = shapes
    return out


def _within(stats):
    return stats["rel"] <= REL_TOL and not stats["nan_ort"] and not stats["nan_torch"]


def _brief(stats):
    return {k: stats[k] for k in ("max_abs_diff", "max_abs_torch", "rel", "nan_ort", "nan_torch")}


def judge(arch, res):
    """Accept when the whole output is within tolerance, or, for a decoder, when
    the real token positions are and only left-padded positions differ: their
    queries see no key at all, and the dynamo exporter's SDPA translation fills
    masked scores with float32's lowest value instead of -inf, so such a row
    becomes a uniform average where torch's SDPA returns 0 (see README)."""
    out = {"all": _brief(res)}
    if "valid" in res:
        out["valid"] = _brief(res["valid"])
    out["padded_positions_differ"] = False
    if _within(res):
        out["ok"] = True
    elif arch.kind == "decoder" and "valid" in res and _within(res["valid"]):
        out["ok"] = True
        out["padded_positions_differ"] = True
    else:
        out["ok"] = False
    out["rel"] = (out["valid"] if out["padded_positions_differ"] else out["all"])["rel"]
    return out


def verify_facts(arch, config, model):
    problems = []
    f = arch.facts
    heads = _first(config, "num_attention_heads", "n_head", "n_heads", "num_heads",
                   "encoder_attention_heads")
    layers = _first(config, "num_hidden_layers", "n_layer", "n_layers", "num_layers",
                    "encoder_layers")
    if heads != f["attention"]["num_heads"]:
        problems.append(f"heads {heads} != {f['attention']['num_heads']}")
    if layers != f["num_layers"]:
        problems.append(f"layers {layers} != {f['num_layers']}")
    kv = _first(config, "num_key_value_heads", "num_kv_heads")
    if arch.family == "falcon":
        kv = 1 if getattr(config, "multi_query", False) else kv
    if kv is not None and kv != f["attention"]["kv_heads"]:
        problems.append(f"kv heads {kv} != {f['attention']['kv_heads']}")
    sw = getattr(config, "sliding_window", None) if arch.family in ("mistral", "mixtral") else None
    if sw != f["attention"]["sliding_window"]:
        problems.append(f"sliding_window {sw} != {f['attention']['sliding_window']}")
    pos = f["position"]
    if pos["scheme"] in ("partial_rotary", "rotary_interleaved"):
        factor = _first(config, "partial_rotary_factor", "rotary_pct")
        rope = getattr(config, "rope_parameters", None)
        if isinstance(rope, dict) and rope.get("partial_rotary_factor") is not None:
            factor = rope["partial_rotary_factor"]
        rdim = getattr(config, "rotary_dim", None) if arch.family == "gptj" else \
            int(Z.HEAD_DIM * factor) if factor else None
        if rdim != pos["rotary_dim"]:
            problems.append(f"rotary dim {rdim} != {pos['rotary_dim']}")
    par = {"phi": True, "gpt_neox": bool(getattr(config, "use_parallel_residual", False)),
           "gptj": True, "falcon": bool(getattr(config, "parallel_attn", False))}
    if par.get(arch.family, False) != f["parallel_residual"]:
        problems.append(f"parallel residual {par.get(arch.family)} != {f['parallel_residual']}")
    if f["moe"]:
        experts = _first(config, "num_local_experts", "num_experts")
        topk = _first(config, "num_experts_per_tok")
        if (experts, topk) != (f["moe"]["experts"], f["moe"]["top_k"]):
            problems.append(f"moe {experts}/{topk} != {f['moe']['experts']}/{f['moe']['top_k']}")
    return problems


def sliding_window_matters(arch, tf, feeds, ref):
    """Mistral: the same weights without the window must give other logits."""
    if arch.family != "mistral":
        return None
    model, config = build_model(arch, tf)
    config.sliding_window = None
    for module in model.modules():
        if hasattr(module, "config") and module.config is not config:
            module.config.sliding_window = None
        if hasattr(module, "sliding_window"):
            module.sliding_window = None
    wrapper, _ = wrap(arch, model)
    with torch.no_grad():
        out = wrapper(*[torch.from_numpy(feeds[n]) for n in feeds]).numpy()
    return float(np.max(np.abs(out - ref)) / np.max(np.abs(ref)))


# ---------------------------------------------------------------------------


def generate(arch, tf, log):
    stem = f"{arch.name}.{EXPORTER}"
    onnx_path = os.path.join(MODELS, stem + ".onnx")
    feeds_path = os.path.join(MODELS, stem + ".npz")
    ref_path = os.path.join(MODELS, stem + ".out.npz")
    entry = {
        "name": stem,
        "architecture": arch.family,
        "variant": arch.name,
        "hf_class": arch.hf_class,
        "exporter": EXPORTER,
        "torch": torch.__version__,
        "transformers": tf.__version__,
        "kind": arch.kind,
    }
    model, config = build_model(arch, tf)
    entry["attn_implementation"] = attn_implementation(model, config)
    experts = getattr(config, "_experts_implementation", None)
    if arch.facts["moe"]:
        entry["experts_implementation"] = experts or "default (transformers 4.x: loop over experts)"
    problems = verify_facts(arch, config, model)
    if problems:
        raise RuntimeError("facts do not match the config: " + "; ".join(problems))
    feeds = make_feeds(arch)
    wrapper, output = wrap(arch, model)
    with torch.no_grad():
        ref = wrapper(*[torch.from_numpy(feeds[n]) for n in feeds]).numpy()
    window = sliding_window_matters(arch, tf, feeds, ref)
    if window is not None:
        entry["sliding_window_effect_rel"] = window
        if window < 1e-3:
            raise RuntimeError(f"sliding window has no effect on the logits (rel {window:.2e})")
    for p in (onnx_path, feeds_path, ref_path):
        if os.path.exists(p):
            os.remove(p)
    save_npz(feeds_path, feeds)
    save_npz(ref_path, {output: ref})
    with torch.no_grad():
        extra = export(arch, wrapper, feeds, output, onnx_path)
    entry.update(extra)
    check = run_ort_check(onnx_path, feeds_path, ref_path)
    if "error" in check:
        raise RuntimeError("onnxruntime: " + check["error"])
    res = check["results"][0]
    if "error" in res:
        raise RuntimeError("onnxruntime: " + res["error"])
    entry["other_shape_check"] = other_shape_check(arch, wrapper, output, onnx_path)
    # dims as the file names them, bound to the values of the feeds
    dims = {}
    for inp in check["inputs"]:
        for axis, d in enumerate(inp["dims"]):
            if isinstance(d, str):
                dims[d] = int(feeds[inp["name"]].shape[axis])
    entry.update({
        "file": os.path.relpath(onnx_path, HERE),
        "inputs": os.path.relpath(feeds_path, HERE),
        "torch_outputs": os.path.relpath(ref_path, HERE),
        "input_names": [i["name"] for i in check["inputs"]],
        "output_names": [o["name"] for o in check["outputs"]],
        "input_dims": {i["name"]: i["dims"] for i in check["inputs"]},
        "output_dims": {o["name"]: o["dims"] for o in check["outputs"]},
        "dims": dims,
        "padding": ("left" if arch.kind == "decoder" else "right") if arch.inputs == "tokens" else None,
        "padded_positions": {"1": Z.PAD} if arch.inputs == "tokens" else {},
        "opset": check["opset"],
        "producer": check["producer"],
        "size_bytes": os.path.getsize(onnx_path),
        "ort_check": dict(judge(arch, res), tolerance_rel=REL_TOL),
        "ops": check["ops"],
        "functions": check["functions"],
    })
    entry.update(arch.facts)
    verdict = entry["ort_check"]
    ok = verdict["ok"]
    full = verdict["all"]
    log(f"{stem:32s} opset {check['opset']:>2}  {entry['size_bytes'] / 1024:6.1f} KiB  "
        f"max|d| {full['max_abs_diff']:.2e}  max|t| {full['max_abs_torch']:.2e}  "
        f"rel {full['rel']:.1e}"
        + (f"  real tokens: rel {verdict['valid']['rel']:.1e} (padded positions differ)"
           if verdict["padded_positions_differ"] else "")
        + f"  dims {dims}  {'ok' if ok else 'FAILED'}"
        f"  other shape: {_other(entry['other_shape_check'])}")
    if not ok:
        raise RuntimeError(f"onnxruntime differs from torch: rel {full['rel']:.3e} > {REL_TOL}"
                           + (" (NaN)" if full["nan_ort"] or full["nan_torch"] else ""))
    return entry


def _other(c):
    if "error" in c:
        return "FAILED " + c["error"]
    pad = " padded positions differ" if c["padded_positions_differ"] else ""
    return ("ok" if c["ok"] else "FAILED") + f" (rel {c['rel']:.1e}{pad})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated zoo names (default: all)")
    ap.add_argument("--keep-failed", action="store_true",
                    help="keep the files of a model that failed (for debugging)")
    args = ap.parse_args()
    import transformers as tf
    tf.logging.set_verbosity_error()
    os.makedirs(MODELS, exist_ok=True)
    names = args.only.split(",") if args.only else [a.name for a in Z.ARCHS]
    unknown = [n for n in names if n not in Z.BY_NAME]
    if unknown:
        sys.exit(f"make_zoo.py: unknown architecture(s): {', '.join(unknown)}")
    print(f"make_zoo: exporter {EXPORTER}, torch {torch.__version__}, "
          f"transformers {tf.__version__}", flush=True)

    entries, excluded = [], []
    for name in names:
        arch = Z.BY_NAME[name]
        try:
            entries.append(generate(arch, tf, lambda s: print(s, flush=True)))
        except Exception as e:  # noqa: BLE001 - recorded in zoo.json
            msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            print(f"{arch.name}.{EXPORTER}: EXCLUDED: {msg}", flush=True)
            if os.environ.get("ZOO_TRACEBACK"):
                traceback.print_exc()
            excluded.append({"name": f"{arch.name}.{EXPORTER}", "architecture": arch.family,
                             "variant": arch.name, "exporter": EXPORTER, "reason": msg,
                             "torch": torch.__version__, "transformers": tf.__version__})
            if not args.keep_failed:
                for ext in (".onnx", ".npz", ".out.npz"):
                    p = os.path.join(MODELS, f"{arch.name}.{EXPORTER}{ext}")
                    if os.path.exists(p):
                        os.remove(p)

    update_zoo_json(entries, excluded, set(names))
    print(f"make_zoo: {len(entries)} exported, {len(excluded)} excluded", flush=True)


def update_zoo_json(entries, excluded, names):
    zoo = {"models": [], "excluded": []}
    if os.path.exists(ZOO_JSON):
        with open(ZOO_JSON) as f:
            zoo = json.load(f)

    def stale(e):
        return e["exporter"] == EXPORTER and e["variant"] in names

    order = {a.name: i for i, a in enumerate(Z.ARCHS)}
    exporters = {"torchscript": 0, "dynamo": 1}

    def key(e):
        return (order.get(e["variant"], 999), exporters.get(e["exporter"], 9))

    models = sorted([e for e in zoo.get("models", []) if not stale(e)] + entries, key=key)
    excl = sorted([e for e in zoo.get("excluded", []) if not stale(e)] + excluded, key=key)
    out = {
        "about": "Hugging Face architectures with tiny random configs exported to ONNX by "
                 "torch's TorchScript and dynamo exporters; generated by test/zoo/make_zoo.py. "
                 "Paths are relative to this file. 'dims' binds the symbolic input dims the "
                 "file declares (shardc --dim NAME=N) to the shapes of the stored feeds.",
        "tolerance": f"max|ort - torch| <= {REL_TOL} * max|torch|",
        "sizes": {"hidden": Z.HIDDEN, "layers": Z.LAYERS, "heads": Z.HEADS,
                  "head_dim": Z.HEAD_DIM, "intermediate": Z.INTER, "vocab": Z.VOCAB,
                  "max_positions": Z.MAX_POS, "batch": Z.BATCH, "sequence": Z.SEQ,
                  "padded_positions_row1": Z.PAD},
        "models": models,
        "excluded": excl,
    }
    with open(ZOO_JSON, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
