#!/usr/bin/env python3
"""Check cnntime's model zoo against torchvision's real modules, layer by layer.

For every zoo CNN that torchvision has, the script builds torchvision's module (no
weights, training mode), runs it with forward hooks on every module and with
torch.autograd.graph.saved_tensors_hooks around a training forward pass and the
cross-entropy loss, and compares with `cnntime model NAME --input N --json`:

  * every convolution and linear layer: present on both sides under the same name,
    with the same output shape, parameters and MACs;
  * every other cnntime layer named after a torch module: the same output shape
    (cnntime writes C, H, W; a flat [C] is [C, 1, 1], an NHWC [H, W, C] is [C, H, W]);
  * the totals: parameters, MACs (convolutions and linear layers);
  * the bytes autograd saves for backward per sample, FP32: every tensor the graph
    saves, each storage counted once; parameters, the input batch and the labels left
    out. Per sample is batch 2 minus batch 1 (3 minus 2 where batch norm refuses a batch
    of 1), so per-channel statistics (batch norm's mean and inverse std) cancel, as they
    do in cnntime's per-sample figure.

Two differences between PyTorch builds are taken out, so that the comparison is with
what cnntime models (CUDA, PyTorch 2.x): CPU dropout keeps a float mask where CUDA's keeps
a bool one (counted at 1 byte an element here), and PyTorch 1.x's global average pool
saved its whole input (its mean's derivative read self.numel(); 2.x saves the sizes), so
under 1.x the pool runs through a mean that saves nothing (_GlobalMean).

--amp adds the saved elements by dtype under CPU autocast (bfloat16), at the smallest
size checked: CPU autocast in PyTorch 1.13 uses CPU's own op lists, not the CUDA FP16
lists cnntime's amp memory follows, so those counts are reported, not compared.

Every model is checked in a fresh Python process of its own, one after another: a
model's graph, its saved tensors and what PyTorch's allocator keeps of them go with the
process, so the whole zoo (ViT-H/14 and RegNetY-128GF take gigabytes each) runs in the
memory of its largest model, not of all of them together. With --small-only the models
are small, and one process checks several in turn (importing PyTorch takes seconds);
--jobs N checks N models at once.

Each model is checked at its default input size and at 32x32 where the model accepts it
(--small-only: 32x32 only, the default where 32x32 is refused). `--json` prints a list
with one object per model and size: {"model", "input", "match", "differences": [...],
"params", "macs", "saved_bytes"}; without it a table. Exit status 1 when a model differs.

    /usr/bin/python3 scripts/torchvision_parity.py --cnntime /tmp/cnntime --json
    /usr/bin/python3 scripts/torchvision_parity.py --models resnet18,vgg11

--cnntime is the command that runs cnntime (default: cnntime on PATH, else `go run .`
in the repository). Needs PyTorch and torchvision (CPU is enough).
"""

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import shlex
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = 32
# Models whose torchvision module refuses 32x32 inputs (a pooling or a fixed-size kernel
# runs out of pixels); checked at their default size only.
TOO_SMALL_FOR_32 = {"alexnet", "inception_v3"}  # alexnet needs 63x63, inception_v3 (auxiliary head) 299x299


def cnntime_command(arg):
    if arg:
        return shlex.split(arg)
    exe = shutil.which("cnntime")
    if exe:
        return [exe]
    return ["go", "run", REPO]


def cnntime_json(cmd, args):
    out = subprocess.run(cmd + args, capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd + args)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def build_torch(name):
    import torchvision
    kwargs = {"weights": None}
    if name == "googlenet":
        # cnntime's googlenet has no auxiliary heads (aux_logits=False, as its published
        # weights and parameter count); its inception_v3 keeps torchvision's default
        # auxiliary classifier, whose scores feed the loss too.
        kwargs["aux_logits"] = False
    if name in ("inception_v3", "googlenet"):
        kwargs["init_weights"] = False  # skips the slow truncated-normal init; shapes are the same
    return getattr(torchvision.models, name)(**kwargs)


class _GlobalMean:
    """A global average pool whose backward keeps no tensor, as in PyTorch 2.x.

    adaptive_avg_pool2d to 1x1 is a mean over H and W. PyTorch 1.x's derivative of mean
    read self.numel() and so saved the whole input; PyTorch 2.x saves only its sizes
    (mean_backward(grad, self.sym_sizes(), dim, self.sym_numel(), keepdim)). cnntime
    models 2.x, so under PyTorch 1.x the script runs the pool through this function."""

    fn = None

    @classmethod
    def install(cls):
        import torch
        import torch.nn.functional as F
        if int(torch.__version__.split(".")[0]) >= 2 or cls.fn is not None:
            return

        class Mean(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.shape = x.shape
                return x.mean((-2, -1), keepdim=True)

            @staticmethod
            def backward(ctx, g):
                h, w = ctx.shape[-2], ctx.shape[-1]
                return g.expand(ctx.shape) / (h * w)

        cls.fn = Mean
        original = F.adaptive_avg_pool2d

        def pool(x, output_size):
            size = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
            if tuple(size) == (1, 1) and torch.is_grad_enabled():
                return Mean.apply(x)
            return original(x, output_size)

        F.adaptive_avg_pool2d = pool
        torch.nn.modules.pooling.F.adaptive_avg_pool2d = pool
        import torchvision.models.mobilenetv2 as m2
        m2.nn.functional.adaptive_avg_pool2d = pool


def conv_linear_cost(module, out):
    """Parameters and MACs per sample of one call of a conv or linear module."""
    import torch.nn as nn
    params = sum(p.numel() for p in module.parameters(recurse=False))
    if isinstance(module, nn.Conv2d):
        kh, kw = module.kernel_size
        per_out = (module.in_channels // module.groups) * kh * kw
        return params, out[0].numel() * per_out
    # A linear layer may run over every position of an NHWC tensor (ConvNeXt's MLP).
    return params, module.in_features * out[0].numel()


def trace(model, input_size):
    """Leaf-module calls (name, op class, output shape per sample, params, MACs) of one
    training forward pass at batch 2."""
    import torch
    import torch.nn as nn
    names = {m: n for n, m in model.named_modules()}
    calls = []

    def hook(module, inputs, output):
        if not isinstance(output, torch.Tensor):
            return
        out = list(output.shape[1:])
        if isinstance(module, nn.Linear) and len(out) == 3:
            out = [out[2], out[0], out[1]]  # NHWC (ConvNeXt's MLP): cnntime writes C, H, W
        rec = {"name": names[module], "op": type(module).__name__, "out": out}
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            rec["params"], rec["macs"] = conv_linear_cost(module, output)
        calls.append(rec)

    handles = [m.register_forward_hook(hook) for m in model.modules() if not list(m.children())]
    try:
        with torch.no_grad():
            model(torch.randn(2, 3, input_size, input_size))
    finally:
        for h in handles:
            h.remove()
    return calls


def main_logits(out):
    import torch
    if isinstance(out, torch.Tensor):
        return out, []
    # InceptionOutputs / GoogLeNetOutputs in training mode: (logits, aux...)
    parts = list(out)
    return parts[0], [p for p in parts[1:] if isinstance(p, torch.Tensor)]


def saved_bytes(model, input_size, batch, autocast=False):
    """Bytes (and elements by dtype) autograd saves for one training step's backward:
    each storage once, parameters and the input batch (and casts of parameters) left out."""
    import torch
    import torch.nn.functional as F
    params = {p.data_ptr() for p in model.parameters()}
    x = torch.randn(batch, 3, input_size, input_size)
    torch.manual_seed(0)
    target = torch.randint(0, 10, (batch,))
    seen = {}
    kept = []

    def pack(t):
        kept.append(t)
        try:
            ptr = t.storage().data_ptr()
            nbytes = t.storage().nbytes()
        except Exception:  # tensors without storage
            return t
        if ptr in params or ptr in (x.data_ptr(), target.data_ptr()) or ptr in seen:
            return t
        fn = t.grad_fn
        if fn is not None and type(fn).__name__ == "ToCopyBackward0":
            nxt = [f for f, _ in fn.next_functions if f is not None]
            if nxt and type(nxt[0]).__name__ == "AccumulateGrad":
                return t  # autocast's cast of a parameter: weights' memory, not activations
        seen[ptr] = (nbytes, t.dtype, nbytes // t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if autocast:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits, aux = main_logits(model(x))
                loss = sum(F.cross_entropy(o, target) for o in [logits] + aux)
        else:
            logits, aux = main_logits(model(x))
            loss = sum(F.cross_entropy(o, target) for o in [logits] + aux)
    del loss, kept
    total = sum(b for b, _, _ in seen.values())
    by_dtype = {}
    for b, dt, n in seen.values():
        by_dtype[str(dt).replace("torch.", "")] = by_dtype.get(str(dt).replace("torch.", ""), 0) + n
    return total, by_dtype, len(aux)


def per_sample(model, input_size, autocast=False):
    """Saved bytes per sample: the difference of two consecutive batch sizes, so per-channel
    statistics (batch norm's mean and inverse std) cancel. Batches 1 and 2 where the model
    trains at batch 1: a third less memory than 2 and 3, which the largest models at their
    own size (EfficientNet-B7 at 600x600) need on a 24 GB machine; both give the same figure.
    Batches 2 and 3 where batch norm refuses a batch of 1 (a 1x1 map: small inputs, Inception
    v3's auxiliary head).
    PyTorch's CPU dropout keeps its mask as a float tensor of the activation's dtype, where
    CUDA's fused dropout keeps a bool mask; cnntime counts CUDA's (1 byte an element), so
    the CPU mask is counted at 1 byte here too (dropout_elements)."""
    try:
        lo = 1
        b_lo, d_lo, aux = saved_bytes(model, input_size, lo, autocast)
    except ValueError as e:  # "Expected more than 1 value per channel when training"
        if "value per channel" not in str(e):
            raise
        lo = 2
        b_lo, d_lo, aux = saved_bytes(model, input_size, lo, autocast)
    b_hi, d_hi, _ = saved_bytes(model, input_size, lo + 1, autocast)
    dtypes = {k: d_hi.get(k, 0) - d_lo.get(k, 0) for k in set(d_lo) | set(d_hi)}
    drop = dropout_elements(model, input_size)
    mask = 2 if autocast else 4
    return b_hi - b_lo - drop * (mask - 1), {k: v for k, v in dtypes.items() if v}, aux


def dropout_elements(model, input_size):
    """Elements per sample that the model's active dropout layers mask."""
    import torch
    import torch.nn as nn
    total = [0]

    def hook(module, inputs, output):
        if module.p > 0:
            total[0] += output[0].numel()

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, nn.Dropout)]
    try:
        with torch.no_grad():
            model(torch.randn(2, 3, input_size, input_size))
    finally:
        for h in handles:
            h.remove()
    return total[0]


def same_shape(theirs, mine):
    """cnntime writes every shape C, H, W: a flat torch output [C] is [C, 1, 1], and an
    NHWC one (ConvNeXt's block between its permutes) [H, W, C] is [C, H, W]."""
    if theirs == mine:
        return True
    if len(theirs) == 1:
        return theirs == mine[:1] and mine[1:] == [1, 1]
    return len(theirs) == 3 and theirs == [mine[1], mine[2], mine[0]]


def compare(name, input_size, cmd, amp_too):
    import torch
    torch.manual_seed(0)
    model = build_torch(name).train()
    ours = cnntime_json(cmd, ["model", name, "--input", str(input_size), "--json"])
    diffs = []
    calls = trace(model, input_size)
    by_name = {}
    for c in calls:
        by_name.setdefault(c["name"], []).append(c)
    layers = {l["name"]: l for l in ours["layers"]}
    conv_ops = {"conv2d", "linear"}
    for c in calls:
        if "macs" not in c:
            continue
        l = layers.get(c["name"])
        if l is None:
            diffs.append(f"torch {c['op']} {c['name']} out {c['out']}: no cnntime layer of that name")
            continue
        for key, theirs, mine in (("out_shape", c["out"], l["out_shape"][:len(c["out"])] if c["op"] == "Linear" else l["out_shape"]),
                                  ("params", c["params"], l["params"]), ("macs", c["macs"], l["macs"])):
            if theirs != mine:
                diffs.append(f"{c['name']} {key}: torch {theirs}, cnntime {mine}")
    for l in ours["layers"]:
        torch_calls = by_name.get(l["name"])
        if l["op"] in conv_ops and not torch_calls:
            diffs.append(f"cnntime {l['op']} {l['name']}: no torch module of that name")
            continue
        if not torch_calls or l["op"] in conv_ops:
            continue
        shapes = [c["out"] for c in torch_calls]
        mine = l["out_shape"]
        if not any(same_shape(s, mine) for s in shapes):
            diffs.append(f"{l['name']} ({l['op']}) out_shape: torch {shapes[0]}, cnntime {mine}")
    total_params = sum(p.numel() for p in model.parameters())
    total_macs = sum(c["macs"] for c in calls if "macs" in c)
    if total_params != ours["params"]:
        diffs.append(f"params total: torch {total_params}, cnntime {ours['params']}")
    if total_macs != ours["macs"]:
        diffs.append(f"macs total: torch {total_macs}, cnntime {ours['macs']}")
    fp32, _, aux = per_sample(model, input_size)
    if fp32 != ours["saved_bytes"]:
        diffs.append(f"saved_bytes fp32 per sample: torch {fp32}, cnntime {ours['saved_bytes']}")
    amp = None
    if amp_too:
        amp_bytes, amp_dtypes, _ = per_sample(model, input_size, autocast=True)
        amp = {"bytes": amp_bytes, "elements_by_dtype": amp_dtypes, "autocast": "cpu bfloat16"}
    return {"model": name, "input": input_size, "match": not diffs, "differences": diffs,
            "params": total_params, "macs": total_macs, "saved_bytes": fp32,
            "amp_saved": amp,
            "aux_outputs": aux}


def init_child(threads):
    """Sets up a child process that checks models: PyTorch's threads, PyTorch 1's pool."""
    import torch
    torch.set_num_threads(max(1, min(threads, torch.get_num_threads())))
    _GlobalMean.install()


def compare_sizes(name, sizes, cmd, amp):
    """compare() at each size, in a child process; a model that fails to build or run
    (or whose process dies) is a difference too."""
    out = []
    for size in sizes:
        try:
            out.append(compare(name, size, cmd, amp_too=amp and size == sizes[-1]))
        except Exception as e:
            out.append({"model": name, "input": size, "match": False, "differences": [f"error: {e}"]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print JSON: one object per model and input size")
    ap.add_argument("--cnntime", default="", help="command that runs cnntime (default: cnntime on PATH, else go run .)")
    ap.add_argument("--models", default="", help="comma-separated zoo names (default: every zoo model torchvision has)")
    ap.add_argument("--amp", action="store_true", help="also report the saved elements by dtype under CPU autocast (bfloat16), at the smallest size checked")
    ap.add_argument("--small-only", action="store_true", help="check 32x32 only (the default size where 32x32 is refused): quick")
    ap.add_argument("--no-small", action="store_true", help="check the default input size only, not 32x32")
    ap.add_argument("--jobs", type=int, default=1, help="models checked at once, each in a process of its own (default 1)")
    args = ap.parse_args()
    try:
        import torch
        import torchvision
    except ImportError as e:
        sys.exit(f"torchvision_parity: needs PyTorch and torchvision ({e}); run it with /usr/bin/python3")
    cmd = cnntime_command(args.cnntime)
    zoo = [m["name"] for m in cnntime_json(cmd, ["models", "--json"])]
    have = set(n for n in dir(torchvision.models) if not n.startswith("_"))
    if args.models:
        wanted = [m.strip() for m in args.models.split(",") if m.strip()]
        unknown = [m for m in wanted if m not in zoo]
        if unknown:
            sys.exit(f"torchvision_parity: {', '.join(unknown)} not in cnntime's zoo ('cnntime models' lists it)")
        zoo = wanted
    results = []
    spawn = multiprocessing.get_context("spawn")
    jobs = max(1, args.jobs)
    # A process per model (see the module's doc); small models share their processes.
    per_child = None if args.small_only else 1
    threads = max(1, min(2, (os.cpu_count() or 1) // jobs))
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=spawn, max_tasks_per_child=per_child,
                                                initializer=init_child, initargs=(threads,)) as pool:
        checks = {}
        # The models checked at their full size first, the longest to check, so that no
        # one of them is left to run alone at the end; the results in the zoo's order.
        for name in sorted(zoo, key=lambda n: n not in TOO_SMALL_FOR_32):
            if name not in have:
                checks[name] = (None, [{"model": name, "match": None, "differences": [], "skipped": "torchvision 0.14 has no such model"}])
                continue
            sizes = [default_size(cmd, name)]
            if not args.no_small and name not in TOO_SMALL_FOR_32:
                sizes = [SMALL] if args.small_only else sizes + [SMALL]
            checks[name] = (pool.submit(compare_sizes, name, sizes, cmd, args.amp), sizes)
        for name in zoo:
            future, sizes = checks[name]
            if future is None:
                results.extend(sizes)
                continue
            try:
                checked = future.result()
            except concurrent.futures.process.BrokenProcessPool:
                checked = [{"model": name, "input": size, "match": False,
                            "differences": ["error: the model's process died (killed for lack of memory?)"]} for size in sizes]
            for r in checked:
                results.append(r)
                if not args.json:
                    state = "match" if r["match"] else "DIFFERS"
                    print(f"{name:24s} {r['input']!s:>4s}  {state}", flush=True)
                    for d in r["differences"][:8]:
                        print(f"    {d}")
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        ok = {r["model"] for r in results if r["match"]}
        bad = {r["model"] for r in results if r["match"] is False}
        print(f"\n{len(ok - bad)} of {len(ok | bad)} models match at every size checked")
    return 1 if any(r["match"] is False for r in results) else 0


_sizes = {}


def default_size(cmd, name):
    if not _sizes:
        for m in cnntime_json(cmd, ["models", "--json"]):
            _sizes[m["name"]] = m["input_size"]
    return _sizes[name]


if __name__ == "__main__":
    sys.exit(main())
