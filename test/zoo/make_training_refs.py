#!/usr/bin/env python3
"""torch's training of every causal-LM zoo export: the references of train_zoo_torch.test.

Runs in the TorchScript generator environment (`make .venv-zoo-ts/.installed`:
Debian's torch 1.13 + transformers 4.47.1) for the exports of both exporters:

    .venv-zoo-ts/bin/python test/zoo/make_training_refs.py [--only gpt2.dynamo,...]

Why one environment for both: a dynamo export is transformers 5.24's module
under torch 2.15, but the function is the same as transformers 4.47's (the
zoo's torch outputs of the two generations agree to ~5e-7 on the real
tokens), and the dynamo environment is a 3 GB download. Where transformers 5
renamed or fused a parameter (GPT-NeoX's `embed_out` is `lm_head`; the MoE
experts are 3-D `gate_up_proj`/`down_proj`, the Mixtral router `mlp.gate`),
make_zoo.py's seeded draw is repeated under the 5.x name and shape and split
into the 4.47 parameters. Every module is then checked against the export's
own stored torch outputs (models/NAME.out.npz) on the real tokens, so a
module that is not the export's function fails here, not in a shardc test.

Per model NAME (test/zoo/training/, the layout of test/fixtures/training,
so test/scripts/train_check.py reads both):
- NAME.data.npz: the zoo's feeds repeated for 20 steps (batch 2) and labels.
- NAME.ref.npz: per optimizer OPT (sgd, adamw) the loss of each step before
  its update (`OPT/losses`, float32 run; `OPT/losses_fp64`, the same run in
  float64), the global gradient norm (`OPT/grad_norm`), and the logits on
  step 1's batch after 3 steps (`OPT/eval_out3`); `eval_out0` before training.
- NAME.json: what train_check.py needs (batch, loss, inputs, optimizers'
  hyperparameters, the dims to bind, initializers to --freeze: constants
  the exporter folded, no parameter of torch's; `no_decay_1d`: trained with
  no weight decay on parameters of one dim, shardc --no-decay-1d), the fp32-vs-fp64 disagreement of each
  curve, the module check, versions.

Labels: input_ids, -100 where attention_mask is 0 (transformers' recipe for
padding) and also at the first real token of a left-padded row: that token is
predicted from the last padded position, a query that sees no key, whose
output differs between attention implementations (torch's SDPA gives 0, the
eager masks and the exports a uniform average), so it is not part of the model.
Training is in eval mode (dropout off), torch on one thread.
"""
import argparse
import copy
import io
import json
import math
import os
import sys
import zipfile
import zlib

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_zoo  # noqa: E402
import zoo_archs as Z  # noqa: E402

OUT = os.path.join(HERE, "training")
STEPS = 20
WEIGHTS_AFTER = 3
OPTIMIZERS = {
    "sgd": (torch.optim.SGD, dict(lr=0.05, momentum=0.9)),
    "adamw": (torch.optim.AdamW, dict(lr=3e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)),
}
MODULE_CHECK_REL = 1e-5
# Float initializers of an export that are no parameter of torch's module:
# constants the exporter folded into initializers, which shardc would train
# (it trains every float initializer the loss depends on); the checks pass
# them to --freeze.
NOT_PARAMETERS = {
    "bloom.dynamo": {"unsqueeze_1": "ALiBi slopes [heads, 1], computed by build_alibi_tensor "
                                    "(no parameter), folded into an initializer by the exporter"},
    "gptj.dynamo": {"val_37": "rotary sin/cos table [positions, 8], the buffer embed_positions "
                              "(no parameter), gathered per position by GatherND"},
}
# Exports whose parameters of one dim are not torch's: both exporters fold
# Gemma's RMSNorm scale 1 + weight into one initializer, which a decay on
# every parameter would shrink whole (torch decays weight alone). These are
# trained as Megatron-LM and transformers' Trainer train (no decay on
# biases and norm scales: shardc --no-decay-1d), where the fold changes
# nothing: the gradient and the update of 1 + weight are weight's.
NO_DECAY_1D = {
    "gemma.dynamo": "the RMSNorm scales are 1 + weight, folded by the exporter",
    "gemma.torchscript": "the RMSNorm scales are 1 + weight, folded by the exporter",
}


def save_npz(path, arrays):
    """Deflated npz with a fixed timestamp: equal arrays, byte-identical files."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def v5_draw(arch, name, shape):
    """make_zoo.perturb's draw of a matrix named NAME under transformers 5."""
    gen = torch.Generator().manual_seed((make_zoo.seed_of(arch.seed) + 1) ^ zlib.crc32(name.encode()))
    return 0.1 * torch.randn(shape, generator=gen, dtype=torch.float32)


def v5_overrides(arch, model, config):
    """4.47 parameter name -> the value transformers 5's module holds for it
    (only those 5.x renamed or fused; every one of them is a matrix)."""
    out = {}
    if arch.family == "gpt_neox":
        out["embed_out.weight"] = v5_draw(arch, "lm_head.weight", model.embed_out.weight.shape)
    if arch.family not in ("mixtral", "qwen2_moe"):
        return out
    mixtral = arch.family == "mixtral"
    experts = config.num_local_experts if mixtral else config.num_experts
    inter = config.intermediate_size if mixtral else config.moe_intermediate_size
    hidden = config.hidden_size
    for layer in range(config.num_hidden_layers):
        v5 = f"model.layers.{layer}.mlp"
        v4 = f"model.layers.{layer}." + ("block_sparse_moe" if mixtral else "mlp")
        out[f"{v4}.gate.weight"] = v5_draw(arch, f"{v5}.gate.weight", (experts, hidden))
        gate_up = v5_draw(arch, f"{v5}.experts.gate_up_proj", (experts, 2 * inter, hidden))
        down = v5_draw(arch, f"{v5}.experts.down_proj", (experts, hidden, inter))
        names = ("w1", "w3", "w2") if mixtral else ("gate_proj", "up_proj", "down_proj")
        for e in range(experts):
            out[f"{v4}.experts.{e}.{names[0]}.weight"] = gate_up[e, :inter]
            out[f"{v4}.experts.{e}.{names[1]}.weight"] = gate_up[e, inter:]
            out[f"{v4}.experts.{e}.{names[2]}.weight"] = down[e]
    return out


def build(entry, tf):
    arch = Z.BY_NAME[entry["variant"]]
    model, config = make_zoo.build_model(arch, tf)
    if entry["exporter"] == "dynamo":
        params = dict(model.named_parameters())
        with torch.no_grad():
            for name, value in v5_overrides(arch, model, config).items():
                assert params[name].shape == value.shape, (name, params[name].shape, value.shape)
                params[name].copy_(value)
    wrapper, output = make_zoo.wrap(arch, model)
    assert output == "logits", entry["name"]
    return wrapper


def causal_lm_loss(logits, labels):
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                           labels[:, 1:].reshape(-1), ignore_index=-100)


class Float64Run:
    """For the float64 run: softmax in its input's type, float64 tensors kept
    float64 by `.to(torch.float32)`, and float64 the default dtype.
    transformers' eager attention and routers ask for a float32 softmax (Phi
    also casts its queries and keys to float32), which would make the run
    partly float32 and turn float64's lowest value, the mask's fill, into
    -inf: a fully masked (padded) query row becomes NaN, and 0 * NaN spreads
    it to the real tokens. OPT fills its mask with `torch.full` of the
    default dtype."""

    def __enter__(self):
        self.softmax, self.to = F.softmax, torch.Tensor.to
        self.default = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        to = self.to

        def keep_float64(tensor, *args, **kwargs):
            asked = args[0] if args else kwargs.get("dtype")
            if tensor.dtype == torch.float64 and asked == torch.float32:
                return tensor
            return to(tensor, *args, **kwargs)
        torch.Tensor.to = keep_float64

        def softmax(input, dim=None, _stacklevel=3, dtype=None):
            return self.softmax(input, dim=dim, dtype=None if input.dtype == torch.float64 else dtype)
        F.softmax = softmax

    def __exit__(self, *exc):
        F.softmax, torch.Tensor.to = self.softmax, self.to
        torch.set_default_dtype(self.default)


def train(wrapper, optimizer, feeds, labels, dtype, no_decay_1d):
    """20 steps on the same batch; losses, gradient norms, logits after 3 steps."""
    if dtype == torch.float64:
        with Float64Run():
            return _train(wrapper, optimizer, feeds, labels, dtype, no_decay_1d)
    return _train(wrapper, optimizer, feeds, labels, dtype, no_decay_1d)


def _train(wrapper, optimizer, feeds, labels, dtype, no_decay_1d):
    model = copy.deepcopy(wrapper).to(dtype).eval()
    kind, hyper = OPTIMIZERS[optimizer]
    groups = list(model.parameters())
    if no_decay_1d:
        groups = [{"params": [p for p in groups if p.dim() >= 2]},
                  {"params": [p for p in groups if p.dim() < 2], "weight_decay": 0.0}]
    opt = kind(groups, **hyper)
    ids, mask = (torch.from_numpy(feeds[k]) for k in ("input_ids", "attention_mask"))
    labels = torch.from_numpy(labels)
    losses, norms, after = [], [], None
    for step in range(1, STEPS + 1):
        opt.zero_grad()
        loss = causal_lm_loss(model(ids, mask), labels)
        loss.backward()
        norms.append(math.sqrt(sum(float(p.grad.double().pow(2).sum())
                                   for p in model.parameters() if p.grad is not None)))
        losses.append(float(loss))
        opt.step()
        if step == WEIGHTS_AFTER:
            with torch.no_grad():
                after = model(ids, mask).float().numpy()
    return losses, norms, after, opt.defaults


def make(entry, tf, log):
    name = entry["name"]
    feeds = dict(np.load(os.path.join(HERE, entry["inputs"])))
    real = feeds["attention_mask"].astype(bool)
    wrapper = build(entry, tf)
    ids, mask = (torch.from_numpy(feeds[k]) for k in ("input_ids", "attention_mask"))
    with torch.no_grad():
        out0 = wrapper(ids, mask).numpy()
    stored = np.load(os.path.join(HERE, entry["torch_outputs"]))["logits"]
    module_rel = float(np.abs(out0 - stored)[real].max() / np.abs(stored[real]).max())
    if not module_rel <= MODULE_CHECK_REL:
        raise SystemExit(f"make_training_refs: {name}: the rebuilt module is not the export's "
                         f"(real tokens: rel {module_rel:.2e} > {MODULE_CHECK_REL})")

    labels = np.where(real, feeds["input_ids"], -100)
    labels[:, 1:][~real[:, :-1]] = -100  # predicted from a padded query: see the docstring
    data = {k: np.concatenate([v] * STEPS) for k, v in feeds.items()}
    data["labels"] = np.concatenate([labels] * STEPS)

    refs, settings_opt, disagreement = {"eval_out0": out0}, {}, {}
    for optimizer in OPTIMIZERS:
        no_decay_1d = name in NO_DECAY_1D
        losses, norms, after, defaults = train(wrapper, optimizer, feeds, labels, torch.float32,
                                               no_decay_1d)
        losses64, _, _, _ = train(wrapper, optimizer, feeds, labels, torch.float64, no_decay_1d)
        refs[f"{optimizer}/losses"] = np.array(losses)
        refs[f"{optimizer}/losses_fp64"] = np.array(losses64)
        refs[f"{optimizer}/grad_norm"] = np.array(norms)
        refs[f"{optimizer}/eval_out3"] = after
        rel = [abs(a - b) / abs(b) for a, b in zip(losses, losses64)]
        disagreement[optimizer] = {"max_rel": max(rel), "argmax_step": int(np.argmax(rel)) + 1}
        settings_opt[optimizer] = {"torch_class": f"torch.optim.{OPTIMIZERS[optimizer][0].__name__}",
                                   "hyperparameters": {k: (list(v) if isinstance(v, tuple) else v)
                                                       for k, v in defaults.items()}}
        log(f"{name} {optimizer}: loss {losses[0]:.6f} -> {losses[-1]:.6f}, "
            f"fp32 vs fp64 {disagreement[optimizer]['max_rel']:.1e}")

    settings = {
        "model": name,
        "onnx": f"../{entry['file']}",
        "dims": entry["dims"],
        "batch_size": int(feeds["input_ids"].shape[0]),
        "steps": STEPS,
        "weights_after_steps": WEIGHTS_AFTER,
        "step_rows": "step i (1-based) uses rows [(i-1)*B, i*B) of every array in the data file",
        "step": "optimizer.zero_grad(); logits = module(input_ids, attention_mask); "
                "loss = LOSS(logits, labels); loss.backward(); optimizer.step() (eval mode)",
        "inputs": [{"name": k, "shape": list(v.shape), "dtype": str(v.dtype)} for k, v in feeds.items()],
        "output": {"name": "logits", "shape": list(out0.shape), "dtype": "float32"},
        "compare_where": "attention_mask",
        "loss": {"spec": "causal-lm:logits", "extra_input": "labels",
                 "labels": "input_ids; -100 where attention_mask is 0 and at the first real "
                           "token of a left-padded row (predicted from a query that sees no key)"},
        "optimizers": settings_opt,
        "freeze": NOT_PARAMETERS.get(name, {}),
        **({"no_decay_1d": NO_DECAY_1D[name]} if name in NO_DECAY_1D else {}),
        "fp32_vs_fp64_loss": disagreement,
        "module_check": {"against": entry["torch_outputs"], "where": "attention_mask == 1",
                         "max_rel": module_rel},
        "versions": {"torch": torch.__version__, "transformers": tf.__version__,
                     "numpy": np.__version__},
    }
    os.makedirs(OUT, exist_ok=True)
    save_npz(os.path.join(OUT, f"{name}.data.npz"), data)
    save_npz(os.path.join(OUT, f"{name}.ref.npz"), refs)
    with open(os.path.join(OUT, f"{name}.json"), "w") as f:
        json.dump(settings, f, indent=2)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated zoo.json names (default: every causal LM)")
    args = parser.parse_args()
    import transformers as tf
    tf.logging.set_verbosity_error()
    torch.set_num_threads(1)
    entries = [m for m in json.load(open(os.path.join(HERE, "zoo.json")))["models"]
               if m["kind"] == "decoder"]
    if args.only:
        wanted = args.only.split(",")
        unknown = sorted(set(wanted) - {m["name"] for m in entries})
        if unknown:
            sys.exit(f"make_training_refs: not a causal LM of zoo.json: {', '.join(unknown)}")
        entries = [m for m in entries if m["name"] in wanted]
    for entry in entries:
        make(entry, tf, lambda s: print(s, flush=True))


if __name__ == "__main__":
    main()
