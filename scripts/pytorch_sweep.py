#!/usr/bin/env python3
"""Time real torchvision training steps per batch size and write cnntime's step CSV.

This is the ground truth for cnntime's GPU predictions: whole training steps (forward,
backward, SGD update with momentum) of torchvision models on synthetic data, timed with
CUDA events after warm-up, per batch size. Out-of-memory is caught and recorded; it marks
where the batch range ends, so larger batches of that model are not tried.

The output is the step CSV that `cnntime cache import FILE.csv` reads (see docs/cache.md,
"Step CSV format"): gpu, model, batch_size, precision, framework, step_ms, spread_ms, status,
source, measured_at. Rows are written (and flushed) as they are measured, so an
interrupted run keeps what it measured. Text cells that a spreadsheet would run as a
formula (a --gpu or host name starting with =, +, - or @) get a leading apostrophe, which
the import takes off again.

    python3 scripts/pytorch_sweep.py --models resnet50,vgg16,mobilenet_v2 \\
        --batches 1-256 --precision fp32,amp --out steps.csv
    cnntime cache import steps.csv

Precisions, as cnntime names them: fp32 is PyTorch's default (TF32 convolutions on
Ampere and later, FP32 matrix multiplies), fp32-strict turns TF32 off everywhere, amp is
torch.autocast to FP16 with a GradScaler. --benchmark sets torch.backends.cudnn.benchmark
(cnntime's "fastest" algorithm policy); without it cuDNN's heuristic choice is used.

--device cpu times the same steps (FP32) on this machine's CPU: after --warmup steps per
batch size, the batch sizes take turns for --rounds rounds of --repeats steps each, so a
burst of other work on a shared machine falls on every size alike; each row is the median
over all its steps, its source records the input size, the clock and the load average
seen. --clock cpu times by the CPU time of PyTorch's one thread (other processes then take
no time out of the figures), wall by the wall clock; auto, the default, is cpu when PyTorch
runs one thread and wall otherwise. The gpu column is then the device key
cpu:<host>:<CPU model>:pytorch-<threads>-threads (PyTorch's thread count, --threads sets
it), kept apart from cnntime's own Go CPU backend (cpu:<host>:<CPU model>). A batch that
PyTorch refuses to train (batch norm over one value per channel: batch 1 at 1x1
positions) is recorded as unsupported.

    /usr/bin/python3 scripts/pytorch_sweep.py --device cpu --models resnet18,mobilenet_v2 \
        --batches 1,2,4,8 --input 32 --out steps.csv

--layers times single layers instead of whole steps: every unique layer configuration
of the chosen models (their layer graphs come from `cnntime model NAME --input N --json`,
so the configuration keys are the ones cnntime's own sweeps store), each phase alone in
PyTorch at each batch size: the forward pass (through the torch module torchvision uses,
autograd recording as in training), the data gradient and the weight gradient (each by
torch.autograd.grad with respect to the inputs alone, or the parameters alone, on a graph
built once and kept). Only the phases PyTorch runs in a training step are timed (the
`phases` cnntime lists per layer: none for a view, no data gradient for a layer on the
image, batch norm's whole backward, parameters included, as one phase). The output is
cnntime's kernel measurement CSV (device, config, batch_size, precision, phase, policy,
..., see `cnntime cache export --csv --layers`). On the CPU its device key is the steps'
one, so `cnntime validate --table steps` joins them; on a GPU it is the GPU's key with
:pytorch added (cuda:GPU-<uuid>:pytorch), kept apart from cnntime's own worker's rows
of that GPU, which measure other things (see layer_device_key). A layer whose input is
a permute's output (ConvNeXt's layer norm) gets the permuted, non-contiguous view, as in
the step: the copy is in its forward pass, the permute's own row times the view.

On the CPU, a phase that yields parameter gradients also applies SGD with momentum to
them (to a copy of the parameters, so the kept graph stays valid), as torch.optim.SGD
does for that layer: the optimizer update is inside the layer timings, as in cnntime's
own CPU backend. --rounds rounds go over the batch sizes in turn; at each, every phase of
every configuration runs once in a step's order (the forward passes, then the backward
ones in reverse), --repeats times over after --warmup untimed passes, each call timed
alone (--clock), so that a call finds the caches as a step leaves them; a row is the
median over all rounds. torch.autograd.grad's own cost of starting a backward pass
(timed among the calls on a graph of one view), which a training step pays once and not
per layer, is subtracted from each backward phase.

On a GPU (--device cuda or cuda:N, made the current device), one configuration at a time
and one batch size at a time: its inputs and graph are built, each phase is timed with
CUDA events around back-to-back calls (--rounds x --repeats samples), everything is freed
and its rows are written before the next is built; an out-of-memory while building or
timing marks that batch size and the larger ones oom. Nothing is subtracted: events time
the GPU alone. The update is left out (cnntime models it), and kernel precisions are
cnntime's: fp32 training runs TF32 convolutions on Ampere and later (precision tf32), amp
runs what torch.autocast runs in a step: convolutions and linear layers on FP16 weights
and inputs (no cast timed), the other layers on the type autocast gives their inputs
(FP16 after a convolution, FP32 after a layer norm or the layer scale), layer norm and
the loss in FP32.
On the CPU, --steps-out FILE also times the models' whole steps into a step CSV, in the
same rounds as the layers (each batch size's layers, then its steps), so that layers and
steps see the same machine.

    /usr/bin/python3 scripts/pytorch_sweep.py --device cpu --layers --models resnet18,mobilenet_v2 \
        --batches 1,2,4,8 --input 32 --out layers.csv
    cnntime cache import layers.csv

--layers also takes custom model files (a path ending in .json, as cnntime does).

Needs PyTorch and torchvision (with CUDA for --device cuda); --layers also needs cnntime
(--cnntime, default: cnntime on PATH, else `go run` in this repository).
"""

import argparse
import csv
import datetime
import gc
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import time

COLUMNS = ["gpu", "model", "batch_size", "precision", "framework", "step_ms", "spread_ms", "status", "source", "measured_at"]
# cnntime's kernel measurement CSV (db.MeasurementCSVColumns), device_info last.
LAYER_COLUMNS = ["device", "config", "batch_size", "precision", "phase", "policy", "algorithm", "median_ms",
                 "spread_ms", "repeats", "workspace_bytes", "status", "sweep_id", "measured_at", "source", "device_info"]
PHASES = ("fwd", "bwd_data", "bwd_weights")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The crop size torchvision 0.14 publishes for each model's weights, as cnntime uses it
# (`cnntime models`); every other model trains at 224.
DEFAULT_INPUT = {"inception_v3": 299, "efficientnet_b1": 240, "efficientnet_b2": 288, "efficientnet_b3": 300,
                 "efficientnet_b4": 380, "efficientnet_b5": 456, "efficientnet_b6": 528, "efficientnet_b7": 600,
                 "efficientnet_v2_s": 384, "efficientnet_v2_m": 480, "efficientnet_v2_l": 480}

TEXT_COLUMNS = ("gpu", "model", "precision", "framework", "status", "source",
                "device", "config", "phase", "policy", "algorithm", "device_info")
FORMULA_START = "=+-@\t\r"


def csv_text(s):
    """A text cell safe to open in a spreadsheet, as cnntime writes it (db/csvsafe.Text).

    A cell starting with = + - @ TAB or CR would run as a formula: it gets a leading
    apostrophe, as does one starting with an apostrophe followed by one of those or by
    another apostrophe; `cnntime cache import` takes that apostrophe off again, so every
    name (--gpu, the host's name in the source) reads back unchanged.
    """
    s = str(s)
    if s and (s[0] in FORMULA_START or (len(s) >= 2 and s[0] == "'" and (s[1] in FORMULA_START or s[1] == "'"))):
        return "'" + s
    return s
PRECISIONS = ("fp32", "fp32-strict", "amp", "bf16")
DEFAULT_BATCHES = "1-17,24,31-33,40,47-49,56,63-65,72,79-81,88,95-97,104,111-113,120,127-129,136,143-145,152,159-161,168,175-177,184,191-193,200,207-209,216,223-225,232,239-241,248,255-256"


def parse_batches(text):
    """Reads "1-64,96,128" into a sorted list of distinct positive sizes."""
    sizes = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise ValueError(f"batch sizes {text!r} have an empty item: write them like 1-64,96,128")
        lo, _, hi = item.partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            raise ValueError(f"batch size item {item!r} is not a whole number or a range like 1-64") from None
        if a < 1 or b < a:
            raise ValueError(f"batch range {item!r} must be positive and ascending, like 1-64")
        sizes.update(range(a, b + 1))
    return sorted(sizes)


def summarize(times):
    """Median and half the interquartile range, interpolated as cnntime's sweeps do."""
    if len(times) == 1:
        return times[0], 0.0
    q1, q2, q3 = statistics.quantiles(times, n=4, method="inclusive")
    return q2, (q3 - q1) / 2


# What PyTorch raises when a batch does not fit: its allocator's "CUDA out of memory"
# (torch.cuda.OutOfMemoryError), cuDNN finding no algorithm whose workspace it could
# allocate ("Unable to find a valid cuDNN algorithm to run convolution"), and cuBLAS failing
# to allocate its workspace (CUBLAS_STATUS_ALLOC_FAILED). Each marks where the batch range
# ends, as cnntime's worker records it.
OOM_MESSAGES = ("out of memory", "unable to find a valid cudnn algorithm to run convolution", "cublas_status_alloc_failed")

# What cuDNN and cuBLAS often say when their own allocation failed: out of memory in
# disguise (cublasCreate's CUBLAS_STATUS_NOT_INITIALIZED, cuDNN's internal errors and
# failed executions). Such an error is out of memory when little device memory is left
# (LOW_MEMORY), as cnntime's worker decides (package gpu/cudastatus), a failure otherwise.
DISGUISED_OOM = ("cublas_status_not_initialized", "cudnn_status_internal_error", "cudnn_status_execution_failed",
                 "cublas_status_execution_failed", "cublas_status_internal_error")


def low_memory(total):
    """The free memory below which a disguised failure is taken for out of memory:
    256 MiB, or 1/32 of the GPU's memory if more."""
    return max(256 << 20, total // 32)


def is_oom(err, mem_info=None):
    """Whether err says the batch did not fit. mem_info, when given, returns (free, total)
    device bytes: a disguised failure (DISGUISED_OOM) is out of memory when little is free."""
    text = str(err).lower()
    if type(err).__name__ == "OutOfMemoryError" or any(m in text for m in OOM_MESSAGES):
        return True
    if mem_info is None or not any(m in text for m in DISGUISED_OOM):
        return False
    try:
        free, total = mem_info()
    except Exception:  # noqa: BLE001 - no answer: not known to be out of memory
        return False
    return free < low_memory(total)


class Failures:
    """Layer or step items that failed with an error other than out of memory: each is
    printed and counted, the sweep goes on, and the script exits non-zero at the end so
    that a run with failures never reads as a clean one."""

    def __init__(self):
        self.items = []

    def add(self, what, err):
        self.items.append(f"{what}: {err}")
        print(f"{what}: failed: {err}", file=sys.stderr)


def logits_of(out):
    """The main logits of a model's output (GoogLeNet and Inception return auxiliaries too)."""
    if hasattr(out, "logits"):
        return out.logits
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def time_model(torch, torchvision, name, batches, precision, args, device, emit, failures=None):
    """Times one model at each batch size until one does not fit; emits one row per size.
    A batch that fails otherwise is left out and counted in failures (when given)."""
    torch.backends.cudnn.benchmark = args.benchmark
    torch.backends.cudnn.allow_tf32 = precision == "fp32"
    torch.backends.cuda.matmul.allow_tf32 = False
    amp = precision in ("amp", "bf16")  # autocast to FP16, or to bfloat16 (no loss scaling)
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    resolution = args.resolution or DEFAULT_INPUT.get(name, 224)
    net = build_model(torchvision, name, args).to(device).train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        scaler = torch.amp.GradScaler("cuda", enabled=precision == "amp")
    else:  # PyTorch before 2.3
        scaler = torch.cuda.amp.GradScaler(enabled=precision == "amp")

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype, enabled=amp):
            loss = loss_fn(logits_of(net(x)), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for batch in batches:
        row = {"model": name, "batch_size": batch, "precision": precision, "status": "ok", "step_ms": "", "spread_ms": ""}
        try:
            x = torch.randn(batch, 3, resolution, resolution, device=device)
            y = torch.randint(0, args.classes, (batch,), device=device)
            for _ in range(args.warmup):
                step(x, y)
            torch.cuda.synchronize(device)
            times = []
            for _ in range(args.repeats):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                step(x, y)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
            median, spread = summarize(times)
            row["step_ms"], row["spread_ms"] = f"{median:.4f}", f"{spread:.4f}"
        except RuntimeError as err:  # torch.cuda.OutOfMemoryError is a RuntimeError
            if is_oom(err, lambda: torch.cuda.mem_get_info(device)):
                row["status"] = "oom"
            elif failures is None:
                raise
            else:
                failures.add(f"{name} {precision} batch {batch}", err)
                row = None
        finally:
            x = y = None
            opt.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
        if row is None:
            continue
        emit(row)
        print(f"{name} {precision} batch {batch}: {row['status']} {row['step_ms']} ms", file=sys.stderr)
        if row["status"] == "oom":
            break  # larger batches do not fit either
    del net, opt


def cpu_model():
    """The processor's model name from /proc/cpuinfo (as cnntime's CPU backend reads it)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() == "model name":
                    return " ".join(v.split())
    except OSError:
        pass
    import platform
    return platform.machine() + " CPU"


def build_model(torchvision, name, args):
    builder = getattr(torchvision.models, name, None)
    if builder is None:
        raise SystemExit(f"pytorch_sweep.py: torchvision has no model {name!r}")
    kwargs = {"weights": None, "num_classes": args.classes}
    if name in ("googlenet", "inception_v3"):
        kwargs["aux_logits"] = False
        kwargs["init_weights"] = False
    return builder(**kwargs)


class CPUSteps:
    """One model's FP32 training steps on the CPU at each batch size: warmed up once,
    then timed round after round (each round --repeats steps per batch size, the sizes
    taking turns), so a burst of other work on a shared machine falls on every size alike."""

    def __init__(self, torch, torchvision, name, batches, args, emit):
        self.name, self.args, self.emit = name, args, emit
        resolution = args.resolution or DEFAULT_INPUT.get(name, 224)
        torch.manual_seed(0)
        self.net = build_model(torchvision, name, args).train()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01, momentum=0.9)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.data = {b: (torch.randn(b, 3, resolution, resolution), torch.randint(0, args.classes, (b,))) for b in batches}
        self.times = {}
        for b in batches:
            try:
                for _ in range(max(1, args.warmup)):
                    self.step(*self.data[b])
            except ValueError as err:
                # Batch norm refuses a batch of one sample at 1x1 positions in training
                # ("Expected more than 1 value per channel"): PyTorch cannot train it.
                emit({"model": name, "batch_size": b, "precision": "fp32", "status": "unsupported",
                      "step_ms": "", "spread_ms": ""})
                print(f"{name} fp32 batch {b}: unsupported ({err})", file=sys.stderr)
                continue
            self.times[b] = []

    def step(self, x, y):
        self.opt.zero_grad(set_to_none=True)
        self.loss_fn(logits_of(self.net(x)), y).backward()
        self.opt.step()

    def round(self, batch=None):
        """Times --repeats steps at each batch size (at batch alone, when given)."""
        for b, times in self.times.items():
            if batch is not None and b != batch:
                continue
            for _ in range(self.args.repeats):
                t0 = self.args.clock_fn()
                self.step(*self.data[b])
                times.append((self.args.clock_fn() - t0) * 1000)

    def finish(self, note):
        """Emits one row per batch size: the median over every round."""
        for b, times in self.times.items():
            median, spread = summarize(times)
            self.emit({"model": self.name, "batch_size": b, "precision": "fp32", "status": "ok",
                       "step_ms": f"{median:.4f}", "spread_ms": f"{spread:.4f}"}, note)
            print(f"{self.name} fp32 batch {b}: {median:.2f} ms ({note})", file=sys.stderr)
        self.net = self.opt = self.data = None


def time_model_cpu(torch, torchvision, name, batches, args, emit):
    """Times one model's FP32 training steps on the CPU (CPUSteps, --rounds rounds); the
    rows are the medians over all rounds, with the load average seen."""
    steps = CPUSteps(torch, torchvision, name, batches, args, emit)
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        steps.round()
        loads.append(os.getloadavg()[0])
    steps.finish(f"load average {min(loads):.2f}-{max(loads):.2f}")


# ---- --layers: every unique layer configuration, each phase timed alone ----------------

def cnntime_command(arg):
    """The command that runs cnntime: --cnntime, else cnntime on PATH, else `go run` here."""
    if arg:
        return shlex.split(arg)
    exe = shutil.which("cnntime")
    if exe:
        return [exe]
    return ["go", "run", REPO]


def parse_config_key(key):
    """Reads a cnntime configuration key (cnn.Config.Key), e.g.
    conv2d:in=3x32x32,out=64x16x16,k=7x7,s=2x2,p=3x3,d=1x1,g=1,bias=false."""
    op, _, rest = key.partition(":")
    spec = {"op": op, "n": 1, "k": (1, 1), "s": (1, 1), "p": (0, 0), "d": (1, 1), "g": 1, "bias": False, "ceil": False}
    for item in rest.split(","):
        name, eq, val = item.partition("=")
        if not eq:
            if name == "ceil":
                spec["ceil"] = True
            continue
        if name in ("in", "out"):
            spec[name] = tuple(int(v) for v in val.split("x"))
        elif name in ("k", "s", "p", "d"):
            spec[name] = tuple(int(v) for v in val.split("x"))
        elif name in ("n", "g"):
            spec[name] = int(val)
        elif name == "bias":
            spec["bias"] = val == "true"
    if "in" not in spec or "out" not in spec:
        raise ValueError(f"configuration key {key!r} has no in= or out= shape")
    return spec


def layer_configs(cmd, models, resolution, classes):
    """The unique layer configurations of models, in first-seen order: key -> its spec,
    the phases PyTorch runs for it (the union over its layers), whether a layer of it
    runs in place, and its first layer's input shapes (C, H, W each)."""
    configs = {}
    for name in models:
        args = ["model", name, "--json"]
        if not name.endswith(".json"):  # a custom model file sets its own input and classes
            if resolution:
                args += ["--input", str(resolution)]
            if classes:
                args += ["--classes", str(classes)]
        out = subprocess.run(cmd + args, capture_output=True, text=True, cwd=REPO)
        if out.returncode != 0:
            raise SystemExit(f"pytorch_sweep.py: {' '.join(cmd + args)} failed: {out.stderr.strip()}")
        graph = json.loads(out.stdout)
        amp_out = amp_dtypes(graph["layers"])
        permuted = permuted_inputs(graph["layers"])
        for layer in graph["layers"]:
            if "config" not in layer or "phases" not in layer:
                raise SystemExit("pytorch_sweep.py --layers: this cnntime's `model --json` gives no configuration keys; use a newer cnntime")
            if not layer["phases"]:
                continue  # a view: PyTorch runs no kernel for it
            c = configs.get(layer["config"])
            if c is None:
                c = configs[layer["config"]] = {"key": layer["config"], "spec": parse_config_key(layer["config"]),
                                                "phases": set(), "inplace": False, "in_shapes": layer["in_shapes"],
                                                "amp_in": [amp_out.get(i, "half") for i in layer.get("inputs", [])],
                                                "permuted_in": layer["index"] in permuted}
            c["phases"].update(layer["phases"])
            c["inplace"] = c["inplace"] or bool(layer.get("inplace"))
    for c in configs.values():
        c["phases"] = [p for p in PHASES if p in c["phases"]]
    return list(configs.values())


def permuted_inputs(layers):
    """The indices of the layers whose input is a permute's output: torchvision's Permute
    is a view, so such a layer (ConvNeXt's layer norm) gets a non-contiguous tensor and
    its forward pass makes the copy (the permute's own row times the view alone)."""
    permutes = {layer["index"] for layer in layers if layer.get("op") == "permute"}
    return {layer["index"] for layer in layers if any(i in permutes for i in layer.get("inputs", []))}


# Under torch.autocast (amp), what each op outputs: convolutions and matrix products run
# in FP16; the ops of autocast's FP32 list (layer norm, cross-entropy) in FP32; the
# layer scale multiplies by an FP32 parameter, so type promotion makes it FP32; add, mul
# and concat take the widest of their inputs; every other op keeps its input's type.
AMP_HALF_OPS = ("conv2d", "linear")
AMP_FLOAT_OPS = ("layernorm", "crossentropy", "scale")


def amp_dtypes(layers):
    """Each layer's output type under amp ("half" or "float"), by index (-1: the FP32
    image), following a graph from `cnntime model --json` in its (topological) order."""
    out = {-1: "float"}
    for layer in layers:
        ins = [out.get(i, "float") for i in layer.get("inputs", [-1])]
        op = layer.get("op", "")
        if op in AMP_HALF_OPS:
            out[layer["index"]] = "half"
        elif op in AMP_FLOAT_OPS:
            out[layer["index"]] = "float"
        else:
            out[layer["index"]] = "float" if "float" in ins else "half"
    return out


class Layer:
    """One layer configuration as PyTorch runs it: the module (or function) torchvision
    uses, its parameters, and the layout of its inputs."""

    def __init__(self, torch, c, device, cuda, half=None):
        """half, under amp, is the 16-bit type (torch.float16 on a GPU): convolutions and
        linear layers hold their weights in it, as autocast casts them, so that their
        timed calls run no cast; None in FP32."""
        nn, F = torch.nn, torch.nn.functional
        self.torch, self.c, self.device, self.half = torch, c, device, half
        s = c["spec"]
        op, cin, cout = s["op"], s["in"][0], s["out"][0]
        # On a GPU an in-place op is timed out of place (same kernel traffic); on the CPU
        # in place, on a fresh copy of its input each call, as in the step.
        self.inplace = c["inplace"] and not cuda
        ip = self.inplace
        module = None
        if op == "conv2d":
            module = nn.Conv2d(cin, cout, s["k"], s["s"], s["p"], s["d"], s["g"], bias=s["bias"])
        elif op == "linear":
            module = nn.Linear(cin, cout, bias=s["bias"])
        elif op == "batchnorm2d":
            module = nn.BatchNorm2d(cin)
        elif op == "layernorm":
            module = nn.LayerNorm(cin)
        elif op == "relu":
            module = nn.ReLU(inplace=ip)
        elif op == "relu6":
            module = nn.ReLU6(inplace=ip)
        elif op == "silu":
            module = nn.SiLU(inplace=ip)
        elif op == "hardswish":
            module = nn.Hardswish(inplace=ip)
        elif op == "hardsigmoid":
            module = nn.Hardsigmoid(inplace=ip)
        elif op == "sigmoid":
            module = nn.Sigmoid()
        elif op == "gelu":
            module = nn.GELU()
        elif op == "maxpool2d":
            module = nn.MaxPool2d(s["k"], s["s"], s["p"], ceil_mode=s["ceil"])
        elif op == "avgpool2d":
            module = nn.AvgPool2d(s["k"], s["s"], s["p"], ceil_mode=s["ceil"])
        elif op == "adaptiveavgpool2d":
            module = nn.AdaptiveAvgPool2d(s["out"][1:])
        elif op == "dropout":
            module = nn.Dropout(0.5)
        elif op == "stochasticdepth":
            import torchvision
            module = torchvision.ops.StochasticDepth(0.1, "row")
        self.params = []
        if module is not None:
            module = module.to(device).train()
            if half is not None and op in AMP_HALF_OPS:
                module = module.to(half)
            self.params = list(module.parameters())
            self.fn = lambda xs: module(xs[0])
            if half is not None and op == "layernorm":
                # autocast runs layer norm in FP32: the FP16 input is cast up, as in the step
                self.fn = lambda xs: module(xs[0].float())
        elif op == "add":
            self.fn = (lambda xs: xs[0].add_(xs[1])) if ip else (lambda xs: xs[0] + xs[1] if len(xs) == 2 else sum(xs[1:], xs[0]))
        elif op == "mul":
            self.fn = lambda xs: xs[0] * xs[1]
        elif op == "scale":  # ConvNeXt's layer scale: a learned (C, 1, 1) factor
            gamma = torch.nn.Parameter(torch.ones(cin, 1, 1, device=device))
            self.params = [gamma]
            self.fn = lambda xs: gamma * xs[0]
        elif op == "concat":
            self.fn = lambda xs: torch.cat(xs, 1)
        elif op == "channelshuffle":
            from torchvision.models.shufflenetv2 import channel_shuffle
            self.fn = lambda xs: channel_shuffle(xs[0], 2)
        elif op == "permute":  # torchvision's Permute: a view; the copy happens in the next op (its input is this view)
            self.fn = lambda xs: xs[0].permute(0, 2, 3, 1)
        elif op == "crossentropy":
            self.fn = None  # needs the targets: see case()
        else:
            raise NotImplementedError(f"no PyTorch op for {op!r}")
        # The momentum buffers and the copy of the parameters the SGD update writes.
        self.shadow = [p.detach().clone() for p in self.params]
        self.momentum = [None] * len(self.params)

    def input_dtypes(self):
        """The inputs' types: FP32, or under amp what autocast's ops produce for them
        (always the 16-bit type for a convolution or a linear layer: no cast is timed)."""
        torch, op = self.torch, self.c["spec"]["op"]
        n = len(self.c["in_shapes"])
        if self.half is None:
            return [torch.float32] * n
        if op in AMP_HALF_OPS:
            return [self.half] * n
        kinds = self.c.get("amp_in") or ["half"] * n
        return [self.half if k == "half" else torch.float32 for k in kinds]

    def make_inputs(self, batch, requires_grad):
        """The leaf tensors of the inputs at a batch size (what gradients are taken with
        respect to) and a function from them to what the op is called on: the leaves
        themselves, or, after a permute, their channels-last views (not contiguous, as
        torchvision's Permute leaves them)."""
        torch = self.torch
        leaves, views = [], []
        for shape, dtype in zip(self.input_shapes(batch), self.input_dtypes()):
            if self.c.get("permuted_in") and len(shape) == 4:
                n, h, w, ch = shape
                leaves.append(torch.randn((n, ch, h, w), device=self.device, dtype=dtype).requires_grad_(requires_grad))
                views.append(lambda t: t.permute(0, 2, 3, 1))
            else:
                leaves.append(torch.randn(shape, device=self.device, dtype=dtype).requires_grad_(requires_grad))
                views.append(lambda t: t)
        return leaves, lambda ts: [v(t) for v, t in zip(views, ts)]

    def input_shapes(self, batch):
        """The inputs' tensor shapes at a batch size, in the layout torchvision runs the op in."""
        s, op = self.c["spec"], self.c["spec"]["op"]
        shapes = []
        for (ch, h, w) in self.c["in_shapes"]:
            if op in ("linear", "crossentropy") and h * w == 1:
                shapes.append((batch, ch))  # a classifier after flatten
            elif op in ("linear", "layernorm"):
                shapes.append((batch, h, w, ch))  # ConvNeXt's channels-last MLP and norms
            else:
                shapes.append((batch, ch, h, w))
        if op in ("add", "concat") and len(shapes) != s["n"]:
            raise ValueError(f"{self.c['key']}: {len(shapes)} inputs, the key says {s['n']}")
        return shapes

    def sgd(self, params, grads):
        """SGD with momentum 0.9 as torch.optim.SGD runs it on the CPU (one tensor at a
        time), on the copies of params."""
        torch = self.torch
        with torch.no_grad():
            for p, g in zip(params, grads):
                i = next(j for j, q in enumerate(self.params) if q is p)
                buf = self.momentum[i]
                if buf is None:
                    buf = self.momentum[i] = torch.clone(g).detach()
                else:
                    buf.mul_(0.9).add_(g, alpha=1)
                self.shadow[i].add_(buf, alpha=-0.01)


def contextlib_null():
    """No autocast: a context factory that does nothing (FP32)."""
    import contextlib
    return contextlib.nullcontext


def layer_case(torch, layer, batch, device, autocast, update):
    """The timed calls of one layer at one batch size: {phase: (prepare, run)}; prepare
    is untimed (a fresh copy of an in-place op's input), run is timed."""
    c, op = layer.c, layer.c["spec"]["op"]
    phases = c["phases"]
    # Inputs require grad unless the layer is on the image (no data gradient), as in a step.
    grad_in = "bwd_data" in phases or op in ("add", "concat")
    xs, view = layer.make_inputs(batch, grad_in)
    fn = layer.fn
    if op == "crossentropy":
        target = torch.randint(0, xs[0].shape[1], (batch,), device=device)
        # autocast computes the loss in FP32 (a cast of the FP16 logits first)
        fn = lambda ins: torch.nn.functional.cross_entropy(ins[0].float(), target)

    def inputs():
        return view([x.clone() for x in xs] if layer.inplace else xs)

    def forward(ins):
        with autocast():
            return fn(ins)

    calls = {}
    box = {}

    def prep_fwd():
        box["ins"] = inputs()
        box.pop("y", None)

    def run_fwd():
        box["y"] = forward(box["ins"])

    calls["fwd"] = (prep_fwd, run_fwd)
    backward = [p for p in phases if p != "fwd"]
    if backward:
        y = forward(inputs())  # one graph, kept for every backward call
        g = torch.ones_like(y) if y.dim() == 0 else torch.randn_like(y)
        leaves = [x for x in xs if x.requires_grad]
        for phase in backward:
            if phase == "bwd_data":
                # Batch norm's one fused backward computes its parameters' gradients too.
                params = layer.params if "bwd_weights" not in phases else []
                targets = leaves + params
            else:
                params = layer.params
                targets = list(params)
            if not targets:
                continue

            def run_bwd(targets=targets, params=params):
                grads = torch.autograd.grad(y, targets, g, retain_graph=True)
                if update and params:
                    layer.sgd(params, grads[len(targets) - len(params):])

            calls[phase] = (None, run_bwd)
    return calls


def layer_row(config, batch, phase, precision, policy, status, times, less_ms=0.0):
    """One row of the kernel measurement CSV: the median and spread of times (ms), less
    less_ms for a backward phase (never below a tenth: it is a median too), or status."""
    row = {"config": config, "batch_size": batch, "precision": precision, "phase": phase,
           "policy": policy, "algorithm": "", "median_ms": "", "spread_ms": "", "repeats": 0,
           "workspace_bytes": 0, "sweep_id": ""}
    if status or not times:
        row["status"] = status or "unsupported"
        return row
    median, spread = summarize(times)
    if phase != "fwd" and less_ms:
        median = max(median - less_ms, median / 10)
    row.update(status="ok", median_ms=f"{median:.6f}", spread_ms=f"{spread:.6f}", repeats=len(times))
    return row


def time_layers(torch, configs, batches, args, device, emit, steps=()):
    """Times every phase of every configuration at every batch size on the CPU in
    interleaved rounds and emits one row per configuration, batch size and phase. steps
    (CPUSteps) are timed in the same rounds, after the layers, so both see the same machine."""
    import contextlib
    autocast = contextlib.nullcontext

    def clock(run):
        """Times one call (--clock)."""
        t0 = args.clock_fn()
        run()
        return (args.clock_fn() - t0) * 1000

    # What torch.autograd.grad costs by itself: a graph of one view, no kernel.
    x0 = torch.zeros(1, device=device, requires_grad=True)
    y0, g0 = x0.view(-1), torch.ones(1, device=device)
    null_run = lambda: torch.autograd.grad(y0, [x0], g0, retain_graph=True)
    null = []

    samples, status, layers = {}, {}, {}
    loads = [os.getloadavg()[0]]
    for rnd in range(args.rounds):
        # Batch size by batch size, every configuration, then the steps at that size:
        # what is compared was measured moments apart.
        for b in batches:
            cases = {}  # key -> {phase: (prepare, run)}, in configuration order
            for c in configs:
                key = c["key"]
                if key not in layers:
                    try:
                        layers[key] = Layer(torch, c, device, False)
                    except NotImplementedError as err:
                        layers[key] = None
                        print(f"{key}: unsupported ({err})", file=sys.stderr)
                layer = layers[key]
                if layer is None or status.get((key, b)):
                    status.setdefault((key, b), "unsupported")
                    continue
                try:
                    cases[key] = layer_case(torch, layer, b, device, autocast, update=True)
                except ValueError as err:
                    # Batch norm refuses one value per channel in training (batch 1 at 1x1).
                    status[(key, b)] = "unsupported"
                    print(f"{key} batch {b}: unsupported ({err})", file=sys.stderr)
                except RuntimeError as err:
                    if not is_oom(err):
                        raise
                    for bb in batches:
                        if bb >= b:
                            status[(key, bb)] = "oom"
            # Every phase once in a step's order (the forward passes, then the backward
            # ones in reverse), --repeats times over, each call timed alone: a call finds
            # the caches as the phases before it in a step leave them, not as its own
            # previous call did (back to back, a small layer's Python, dispatcher and data
            # stay in the core's caches and it runs several times faster than in a step).
            # The entry cost of a backward call, to subtract, is timed among them too
            # (every fifth), in the same state of the caches.
            keys = list(cases)
            order = [(k, "fwd") for k in keys if "fwd" in cases[k]]
            backward = [(k, ph) for k in reversed(keys) for ph in ("bwd_data", "bwd_weights") if ph in cases[k]]
            for i, item in enumerate(backward):
                if i % 5 == 0:
                    order.append((None, "null"))
                order.append(item)
            cases[None] = {"null": (None, null_run)}
            for _ in range(max(1, args.warmup)):
                for k, ph in order:
                    prep, run = cases[k][ph]
                    prep and prep()
                    run()
            for _ in range(args.repeats):
                for k, ph in order:
                    prep, run = cases[k][ph]
                    prep and prep()
                    t = clock(run)
                    if k is None:
                        null.append(t)
                    else:
                        samples.setdefault((k, b, ph), []).append(t)
            cases = None
            for st in steps:
                st.round(b)
        loads.append(os.getloadavg()[0])
        print(f"round {rnd + 1}/{args.rounds}: {len(configs)} configurations x {len(batches)} batch sizes"
              f"{' and the steps' if steps else ''} timed (load average {loads[-1]:.2f})", file=sys.stderr)
    load = f"load average {min(loads):.2f}-{max(loads):.2f}"
    for st in steps:
        st.finish(load + ", in the rounds of the layers")
    null_ms = statistics.median(null) if null else 0.0
    note = f"{load}, backward phases less autograd's {1000 * null_ms:.1f} us entry"
    for c in configs:
        key = c["key"]
        for b in batches:
            for phase in c["phases"]:
                emit(layer_row(key, b, phase, "fp32", "", status.get((key, b)), samples.get((key, b, phase)), null_ms), note)


def kernel_ms(torch, run, k, device):
    """The GPU time of one of k back-to-back calls of run from the profiler's kernel
    records (the sum of the device time of every kernel, copy and set it ran, over k):
    what the GPU spent on the call, not the host's pace issuing it, so a phase of a few
    microseconds reads its kernels' time where CUDA events around the calls read Python's
    and the dispatcher's (the H200's backward phases never read below 64-90 us)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(k):
            run()
        torch.cuda.synchronize(device)
    total_us = 0.0
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:  # PyTorch before 2.4 names it after CUDA
            us = getattr(e, "self_cuda_time_total", 0.0)
        total_us += us
    return total_us / 1000.0 / k


def time_layers_cuda(torch, configs, batches, args, device, precision, emit, half=None, autocast_device="cuda", failures=None):
    """Times every phase of every configuration at every batch size on a GPU, one
    configuration and batch size at a time: its inputs and graph are built, each phase is
    timed with CUDA events around back-to-back calls (--rounds x --repeats samples after
    --warmup calls), everything is freed and its rows are written before the next is
    built, so memory held for one configuration never makes a later one run out, and an
    interrupted run keeps what it wrote. An out-of-memory, while building or while timing,
    marks that batch size and the larger ones oom. Events time the GPU alone: the host's
    cost of a call (autograd's entry, say) overlaps the GPU's work or shows as idle time
    between kernels, and nothing is subtracted.

    Under amp the inputs have the type autocast's ops give them in a step (FP16 from a
    convolution or a linear layer, FP32 from a layer norm or the layer scale), and
    convolutions and linear layers hold FP16 weights and take FP16 inputs, so their timed
    calls run no cast. half and autocast_device are amp's 16-bit type and autocast's device
    (torch.float16 and "cuda"; the unit tests run on the CPU with others)."""
    import contextlib
    torch.backends.cudnn.benchmark = args.benchmark
    torch.backends.cudnn.allow_tf32 = precision == "fp32"
    torch.backends.cuda.matmul.allow_tf32 = False
    amp = precision in ("amp", "bf16")  # bf16: autocast to bfloat16, the same paths
    if precision == "bf16":
        half = torch.bfloat16
    half = (half or torch.float16) if amp else None
    autocast = (lambda: torch.autocast(autocast_device, dtype=half)) if amp else contextlib.nullcontext
    policy = "fastest" if args.benchmark else "heuristic"
    tf32 = precision == "fp32" and torch.cuda.get_device_capability(device)[0] >= 8

    def kernel_precision(op):
        if amp:
            return "fp32" if op == "crossentropy" else precision
        return "tf32" if tf32 and op == "conv2d" else "fp32"

    def clock(run, k):
        """The time of one of k back-to-back calls, between two CUDA events."""
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(k):
            run()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / k

    for c in configs:
        key, op = c["key"], c["spec"]["op"]
        try:
            layer = Layer(torch, c, device, True, half)
        except NotImplementedError as err:
            layer = None
            print(f"{key}: unsupported ({err})", file=sys.stderr)
        oom_from = None
        for b in batches:
            status, samples, calls = None, {}, None
            if layer is None:
                status = "unsupported"
            elif oom_from is not None:
                status = "oom"  # a smaller batch did not fit
            else:
                try:
                    calls = layer_case(torch, layer, b, device, autocast, update=False)
                    for phase, (prep, run) in calls.items():
                        for _ in range(max(1, args.warmup)):
                            prep and prep()
                            run()
                        torch.cuda.synchronize(device)
                        k = max(1, min(100, int(2.0 / max(clock(run, 1), 1e-3))))
                        # The kernels' own time (profiler), not the events' around the
                        # calls, which read the host's issue rate for small phases.
                        samples[phase] = [kernel_ms(torch, run, k, device) for _ in range(args.rounds * args.repeats)]
                except ValueError as err:
                    # Batch norm refuses one value per channel in training (batch 1 at 1x1).
                    status = "unsupported"
                    print(f"{key} batch {b}: unsupported ({err})", file=sys.stderr)
                except RuntimeError as err:  # torch.cuda.OutOfMemoryError is a RuntimeError
                    if is_oom(err, lambda: torch.cuda.mem_get_info(device)):
                        status, oom_from = "oom", b
                        print(f"{key} batch {b}: out of memory", file=sys.stderr)
                    elif failures is None:
                        raise
                    else:  # recorded, and the next batch size and configuration go on
                        status = "failed"
                        failures.add(f"{key} batch {b}", err)
                calls = None
                if status == "oom":
                    gc.collect()
                torch.cuda.empty_cache()
            if status == "failed":
                continue  # no row: its failure is counted
            for phase in c["phases"]:
                emit(layer_row(key, b, phase, kernel_precision(op), policy, status, samples.get(phase)),
                     "the profiler's kernel times of back-to-back calls")
        layer = None
        torch.cuda.empty_cache()


def layer_device_key(gpu, on_cpu):
    """The device key of --layers rows. On a GPU, PyTorch's layer timings are kept apart
    from cnntime's worker's under a key of their own, cuda:GPU-<uuid>:pytorch: they
    measure other things (a small layer's time includes Python's issue rate, amp's layer
    norm runs in FP32 behind a cast, permute is a view), and under the GPU's own key one
    would overwrite the other. cnntime predicts from the worker's rows where a GPU has
    both. Steps keep the GPU's key (their framework column tells them apart), so
    `cnntime validate --table steps` predicts PyTorch's steps from the worker's layers. On
    the CPU the key is PyTorch's already (cpu:<host>:<model>:pytorch-<threads>-threads)."""
    if not on_cpu and gpu.startswith("cuda:") and not gpu.endswith(":pytorch"):
        return gpu + ":pytorch"
    return gpu


def cuda_device(torch, spec):
    """The GPU --device names (cuda or cuda:N), made the current device: CUDA events, the
    current stream and torch.cuda.synchronize() without an argument act on the current
    device, so without it events on cuda:1 would be recorded on GPU 0."""
    index = 0
    if spec.startswith("cuda:"):
        try:
            index = int(spec[5:])
        except ValueError:
            raise ValueError(f"--device {spec!r}: write cuda, cuda:N or cpu") from None
    elif spec != "cuda":
        raise ValueError(f"--device {spec!r}: write cuda, cuda:N or cpu")
    if index < 0 or index >= torch.cuda.device_count():
        raise ValueError(f"--device {spec!r}: this machine has {torch.cuda.device_count()} CUDA GPUs (cuda:0 is the first)")
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)
    return device


def mem_total_bytes():
    """The host's memory from /proc/meminfo (as cnntime's CPU backend reads it), or 0."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", required=True, help="comma-separated torchvision model names, e.g. resnet50,vgg16 (--layers: also custom model files, *.json)")
    p.add_argument("--layers", action="store_true", help="time every unique layer configuration's phases alone and write cnntime's kernel measurement CSV, instead of whole steps")
    p.add_argument("--cnntime", default=os.environ.get("CNNTIME", ""), help="--layers: the command that runs cnntime (default: $CNNTIME, else cnntime on PATH, else `go run` in this repository)")
    p.add_argument("--batches", default=DEFAULT_BATCHES, help="batch sizes, e.g. 1-64,96,128 (default: 1-16, then multiples of 8 with the neighbours of multiples of 16 up to 256)")
    p.add_argument("--precision", default="fp32", help="comma-separated: fp32, fp32-strict, amp, bf16")
    p.add_argument("--benchmark", action="store_true", help="torch.backends.cudnn.benchmark=True (cnntime's fastest policy)")
    p.add_argument("--repeats", type=int, default=0, help="timed steps per batch size (default 20), or with --layers timed calls per phase each round (default 5)")
    p.add_argument("--warmup", type=int, default=-1, help="untimed steps first (default 5), or with --layers untimed calls per phase each round (default 2)")
    p.add_argument("--device", default="cuda", help="cuda, cuda:N (a CUDA device index) or cpu (default cuda)")
    p.add_argument("--rounds", type=int, default=5, help="CPU steps, and --layers: rounds in which the batch sizes take turns (default 5)")
    p.add_argument("--threads", type=int, default=0, help="CPU: torch.set_num_threads (default: PyTorch's own choice)")
    p.add_argument("--clock", choices=("auto", "wall", "cpu"), default="auto", help="CPU: time by the CPU time of PyTorch's thread (cpu: it must run one, see --threads; other processes on a shared machine then take no time out of the figures) or by the wall clock (wall); auto (default): cpu when PyTorch runs one thread, else wall")
    p.add_argument("--steps-out", default="", help="--layers on the CPU: also time the models' whole steps, in the same rounds as the layers (so both see the same machine), into this step CSV")
    p.add_argument("--gpu", default="", help="the catalog GPU id for the gpu column (e.g. a100-sxm4-80gb); default: this GPU's key cuda:GPU-<uuid>")
    p.add_argument("--input", "--resolution", dest="resolution", type=int, default=0, help="input size in pixels (default: the model's own as cnntime knows it, 224 for most; 299 for inception_v3)")
    p.add_argument("--classes", type=int, default=1000, help="output classes (default 1000)")
    p.add_argument("--out", default="-", help="CSV file to write (default: standard output)")
    args = p.parse_args()
    if args.repeats == 0:
        args.repeats = 5 if args.layers else 20
    if args.warmup == -1:
        args.warmup = 2 if args.layers else 5
    try:
        batches = parse_batches(args.batches)
    except ValueError as err:
        p.error(str(err))
    precisions = [s.strip() for s in args.precision.split(",") if s.strip()]
    for prec in precisions:
        if prec not in PRECISIONS:
            p.error(f"unknown precision {prec!r}: use {', '.join(PRECISIONS)}")
    if args.repeats < 1 or args.warmup < 0:
        p.error("--repeats must be at least 1 and --warmup not negative")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if args.steps_out and not (args.layers and args.device == "cpu"):
        p.error("--steps-out goes with --layers --device cpu (without --layers, --out is the step CSV)")
    if not args.layers or args.steps_out:
        for name in models:
            if name.endswith(".json"):
                p.error(f"{name}: whole steps need a torchvision model; a custom model file goes with --layers (without --steps-out)")
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    configs = []
    if args.layers:
        configs = layer_configs(cnntime_command(args.cnntime), models, args.resolution, args.classes)

    try:
        import torch
        import torchvision
    except ImportError as err:
        sys.exit(f"pytorch_sweep.py needs PyTorch and torchvision ({err}); install them (Debian: python3-torch python3-torchvision)")
    host = socket.gethostname()
    on_cpu = args.device == "cpu"
    if on_cpu:
        if precisions != ["fp32"]:
            p.error("--device cpu times fp32 only (CPU autocast is bfloat16, not the amp cnntime predicts)")
        if args.threads:
            torch.set_num_threads(args.threads)
        threads = torch.get_num_threads()
        if args.clock == "cpu" and threads != 1:
            p.error(f"--clock cpu counts one thread's CPU time: PyTorch runs {threads} threads here; add --threads 1")
        if args.clock == "auto":
            args.clock = "cpu" if threads == 1 else "wall"
        # CPU time of this thread: PyTorch's one intra-op thread is the caller's, and the
        # autograd engine runs a CPU graph's backward on the calling thread too.
        args.clock_fn = time.thread_time if args.clock == "cpu" else time.perf_counter
        model = cpu_model()
        device = torch.device("cpu")
        # A key of its own: PyTorch's CPU kernels are not cnntime's Go CPU backend, whose
        # device key is cpu:<host>:<model>.
        gpu = args.gpu or f"cpu:{host}:{model}:pytorch-{threads}-threads"
        framework = f"pytorch {torch.__version__} cpu {threads} threads"
        clock = "CPU time" if args.clock == "cpu" else "wall clock"
        source = f"pytorch_sweep.py on {host} ({model}, {framework}, input {args.resolution or 'default'}, {clock})"
        info = {"backend": "cpu", "name": model, "sm_count": os.cpu_count() or 0, "memory_bytes": mem_total_bytes(),
                "driver": f"pytorch {torch.__version__}, {threads} threads", "host": host}
    else:
        if not torch.cuda.is_available():
            sys.exit("pytorch_sweep.py: PyTorch sees no CUDA GPU on this machine (use --device cpu to time the CPU)")
        try:
            device = cuda_device(torch, args.device)
        except ValueError as err:
            p.error(str(err))
        args.clock_fn = time.perf_counter  # not used: CUDA events time the GPU
        props = torch.cuda.get_device_properties(device)
        gpu = args.gpu
        uuid = str(getattr(props, "uuid", "") or "")
        if not gpu:
            if not uuid:
                sys.exit("pytorch_sweep.py: this PyTorch does not report the GPU's UUID; name the GPU with --gpu CATALOG_ID")
            gpu = "cuda:" + (uuid if uuid.startswith("GPU-") else "GPU-" + uuid)
        framework = f"pytorch {torch.__version__}"
        source = f"pytorch_sweep.py on {host} ({props.name}, cudnn.benchmark={args.benchmark}, input {args.resolution or 'default'})"
        info = {"backend": "cuda", "name": props.name, "uuid": uuid, "gpu_id": args.gpu,
                "compute_capability": f"{props.major}.{props.minor}", "sm_count": props.multi_processor_count,
                "memory_bytes": props.total_memory, "cuda": str(torch.version.cuda or ""),
                "cudnn": str(torch.backends.cudnn.version() or ""), "driver": f"pytorch {torch.__version__}", "host": host}

    device_info = json.dumps(info, separators=(",", ":"))
    layer_device = layer_device_key(gpu, on_cpu)
    files = []

    def writer_for(path, layers):
        """emit(row, note) for a CSV file (- is standard output): the kernel measurement
        CSV when layers, else the step CSV."""
        out = sys.stdout if path == "-" else open(path, "w", newline="")
        if out is not sys.stdout:
            files.append(out)
        writer = csv.DictWriter(out, fieldnames=LAYER_COLUMNS if layers else COLUMNS)
        writer.writeheader()

        def emit(row, note=""):
            now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
            base = layer_source if layers else source
            src = f"{base[:-1]}, {note})" if note else base
            when = now.isoformat().replace("+00:00", "Z")
            if layers:
                row.update(device=layer_device, source=src, measured_at=when, device_info=device_info)
            else:
                row.update(gpu=gpu, framework=framework, source=src, measured_at=when)
            writer.writerow({k: csv_text(v) if k in TEXT_COLUMNS else v for k, v in row.items()})
            out.flush()
        return emit

    layer_source = source.replace("pytorch_sweep.py on", "pytorch_sweep.py --layers on", 1)
    emit = writer_for(args.out, args.layers)
    failures = Failures()
    try:
        if args.layers:
            steps = []
            if args.steps_out:
                emit_step = writer_for(args.steps_out, False)
                steps = [CPUSteps(torch, torchvision, name, batches, args, emit_step) for name in models]
            torch.manual_seed(0)
            if on_cpu:
                time_layers(torch, configs, batches, args, device, emit, steps)
            else:
                for prec in precisions:
                    time_layers_cuda(torch, configs, batches, args, device, prec, emit, failures=failures)
        else:
            for name in models:
                if on_cpu:
                    time_model_cpu(torch, torchvision, name, batches, args, emit)
                    continue
                for prec in precisions:
                    time_model(torch, torchvision, name, batches, prec, args, device, emit, failures=failures)
    finally:
        for f in files:
            f.close()
    if failures.items:
        sys.exit(f"pytorch_sweep.py: {len(failures.items)} items failed (their rows are left out; the first: {failures.items[0]})")


if __name__ == "__main__":
    main()
