#!/usr/bin/env python3
"""Time real torchvision training steps per batch size and write cnntime's step CSV.

This is the ground truth for cnntime's GPU predictions: whole training steps (forward,
backward, SGD update with momentum) of torchvision models on synthetic data, timed with
CUDA events after warm-up, per batch size. Out-of-memory is caught and recorded; it marks
where the batch range ends, so larger batches of that model are not tried.

The output is the step CSV that `cnntime cache import FILE.csv` reads (see the README's
cache section): gpu, model, batch_size, precision, framework, step_ms, spread_ms, status,
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

--device cpu times the same steps (FP32) on this machine's CPU by wall clock: after
--warmup steps per batch size, the batch sizes take turns for --rounds rounds of --repeats
steps each, so a burst of other work on a shared machine falls on every size alike; each
row is the median over all its steps, its source records the input size and the load
average seen. The gpu column is then the device key
cpu:<host>:<CPU model>:pytorch-<threads>-threads (PyTorch's thread count, --threads sets
it), kept apart from cnntime's own Go CPU backend (cpu:<host>:<CPU model>). A batch that
PyTorch refuses to train (batch norm over one value per channel: batch 1 at 1x1
positions) is recorded as unsupported.

    /usr/bin/python3 scripts/pytorch_sweep.py --device cpu --models resnet18,mobilenet_v2 \
        --batches 1,2,4,8 --input 32 --out steps.csv

Needs PyTorch and torchvision (with CUDA for --device cuda).
"""

import argparse
import csv
import datetime
import socket
import statistics
import sys

COLUMNS = ["gpu", "model", "batch_size", "precision", "framework", "step_ms", "spread_ms", "status", "source", "measured_at"]
TEXT_COLUMNS = ("gpu", "model", "precision", "framework", "status", "source")
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
PRECISIONS = ("fp32", "fp32-strict", "amp")
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


def is_oom(err):
    return "out of memory" in str(err).lower() or type(err).__name__ == "OutOfMemoryError"


def logits_of(out):
    """The main logits of a model's output (GoogLeNet and Inception return auxiliaries too)."""
    if hasattr(out, "logits"):
        return out.logits
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def time_model(torch, torchvision, name, batches, precision, args, device, emit):
    """Times one model at each batch size until one does not fit; emits one row per size."""
    torch.backends.cudnn.benchmark = args.benchmark
    torch.backends.cudnn.allow_tf32 = precision == "fp32"
    torch.backends.cuda.matmul.allow_tf32 = False
    amp = precision == "amp"
    resolution = args.resolution or (299 if name == "inception_v3" else 224)
    net = build_model(torchvision, name, args).to(device).train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        scaler = torch.amp.GradScaler("cuda", enabled=amp)
    else:  # PyTorch before 2.3
        scaler = torch.cuda.amp.GradScaler(enabled=amp)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
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
            if not is_oom(err):
                raise
            row["status"] = "oom"
        finally:
            x = y = None
            opt.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
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


def time_model_cpu(torch, torchvision, name, batches, args, emit):
    """Times one model's FP32 training steps on the CPU by wall clock. After warm-up the
    batch sizes take turns, round after round (--rounds, each --repeats steps per size),
    so a burst of other work on a shared machine falls on every size alike; the row is
    the median over all rounds, with the load average seen."""
    import os
    import time
    resolution = args.resolution or (299 if name == "inception_v3" else 224)
    torch.manual_seed(0)
    net = build_model(torchvision, name, args).train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss_fn(logits_of(net(x)), y).backward()
        opt.step()

    data = {b: (torch.randn(b, 3, resolution, resolution), torch.randint(0, args.classes, (b,))) for b in batches}
    times = {}
    for b in batches:
        try:
            for _ in range(max(1, args.warmup)):
                step(*data[b])
        except ValueError as err:
            # Batch norm refuses a batch of one sample at 1x1 positions in training
            # ("Expected more than 1 value per channel"): PyTorch cannot train it.
            emit({"model": name, "batch_size": b, "precision": "fp32", "status": "unsupported",
                  "step_ms": "", "spread_ms": ""})
            print(f"{name} fp32 batch {b}: unsupported ({err})", file=sys.stderr)
            continue
        times[b] = []
    batches = list(times)
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for b in batches:
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                step(*data[b])
                times[b].append((time.perf_counter() - t0) * 1000)
        loads.append(os.getloadavg()[0])
    load = f"load average {min(loads):.2f}-{max(loads):.2f}"
    for b in batches:
        median, spread = summarize(times[b])
        emit({"model": name, "batch_size": b, "precision": "fp32", "status": "ok",
              "step_ms": f"{median:.4f}", "spread_ms": f"{spread:.4f}"}, load)
        print(f"{name} fp32 batch {b}: {median:.2f} ms ({load})", file=sys.stderr)
    del net, opt


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", required=True, help="comma-separated torchvision model names, e.g. resnet50,vgg16")
    p.add_argument("--batches", default=DEFAULT_BATCHES, help="batch sizes, e.g. 1-64,96,128 (default: 1-16, then multiples of 8 with the neighbours of multiples of 16 up to 256)")
    p.add_argument("--precision", default="fp32", help="comma-separated: fp32, fp32-strict, amp")
    p.add_argument("--benchmark", action="store_true", help="torch.backends.cudnn.benchmark=True (cnntime's fastest policy)")
    p.add_argument("--repeats", type=int, default=20, help="timed steps per batch size (default 20)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first (default 5)")
    p.add_argument("--device", default="cuda", help="cuda, cuda:N (a CUDA device index) or cpu (default cuda)")
    p.add_argument("--rounds", type=int, default=5, help="CPU: rounds in which the batch sizes take turns (default 5)")
    p.add_argument("--threads", type=int, default=0, help="CPU: torch.set_num_threads (default: PyTorch's own choice)")
    p.add_argument("--gpu", default="", help="the catalog GPU id for the gpu column (e.g. a100-sxm4-80gb); default: this GPU's key cuda:GPU-<uuid>")
    p.add_argument("--input", "--resolution", dest="resolution", type=int, default=0, help="input size in pixels (default 224; 299 for inception_v3)")
    p.add_argument("--classes", type=int, default=1000, help="output classes (default 1000)")
    p.add_argument("--out", default="-", help="CSV file to write (default: standard output)")
    args = p.parse_args()
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

    try:
        import torch
        import torchvision
    except ImportError as err:
        sys.exit(f"pytorch_sweep.py needs PyTorch and torchvision ({err}); install them (Debian: python3-torch python3-torchvision)")
    on_cpu = args.device == "cpu"
    if on_cpu:
        if precisions != ["fp32"]:
            p.error("--device cpu times fp32 only (CPU autocast is bfloat16, not the amp cnntime predicts)")
        if args.rounds < 1:
            p.error("--rounds must be at least 1")
        if args.threads:
            torch.set_num_threads(args.threads)
        threads = torch.get_num_threads()
        model = cpu_model()
        # A key of its own: PyTorch's CPU kernels are not cnntime's Go CPU backend, whose
        # device key is cpu:<host>:<model>.
        gpu = args.gpu or f"cpu:{socket.gethostname()}:{model}:pytorch-{threads}-threads"
        framework = f"pytorch {torch.__version__} cpu {threads} threads"
        source = f"pytorch_sweep.py on {socket.gethostname()} ({model}, {threads} threads, input {args.resolution or 'default'})"
    else:
        if not torch.cuda.is_available():
            sys.exit("pytorch_sweep.py: PyTorch sees no CUDA GPU on this machine (use --device cpu to time the CPU)")
        index = 0
        if args.device.startswith("cuda:"):
            try:
                index = int(args.device[5:])
            except ValueError:
                p.error(f"--device {args.device!r}: write cuda, cuda:N or cpu")
        elif args.device != "cuda":
            p.error(f"--device {args.device!r}: write cuda, cuda:N or cpu")
        device = torch.device("cuda", index)
        props = torch.cuda.get_device_properties(device)
        gpu = args.gpu
        if not gpu:
            uuid = str(getattr(props, "uuid", "") or "")
            if not uuid:
                sys.exit("pytorch_sweep.py: this PyTorch does not report the GPU's UUID; name the GPU with --gpu CATALOG_ID")
            gpu = "cuda:" + (uuid if uuid.startswith("GPU-") else "GPU-" + uuid)
        framework = f"pytorch {torch.__version__}"
        source = f"pytorch_sweep.py on {socket.gethostname()} ({props.name}, cudnn.benchmark={args.benchmark}, input {args.resolution or 'default'})"

    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="")
    writer = csv.DictWriter(out, fieldnames=COLUMNS)
    writer.writeheader()

    def emit(row, note=""):
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        src = f"{source[:-1]}, {note})" if note else source
        row.update(gpu=gpu, framework=framework, source=src, measured_at=now.isoformat().replace("+00:00", "Z"))
        writer.writerow({k: csv_text(v) if k in TEXT_COLUMNS else v for k, v in row.items()})
        out.flush()

    try:
        for name in [m.strip() for m in args.models.split(",") if m.strip()]:
            if on_cpu:
                time_model_cpu(torch, torchvision, name, batches, args, emit)
                continue
            for prec in precisions:
                time_model(torch, torchvision, name, batches, prec, args, device, emit)
    finally:
        if out is not sys.stdout:
            out.close()


if __name__ == "__main__":
    main()
