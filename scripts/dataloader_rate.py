#!/usr/bin/env python3
"""Measure a PyTorch DataLoader's JPEG decode rate per core, beside cnntime's figure.

The script writes a folder of JPEGs at ImageNet-like sizes (400x350 on average; smooth
gradients with fine texture at quality 90, about 90 KB a file, ImageNet's ~110 KB; no download),
reads them with torchvision's ImageFolder through the standard ImageNet training transform
(PIL decode, RandomResizedCrop(224), RandomHorizontalFlip, ToTensor, Normalize) and a
DataLoader at 1 and 2 worker processes, and prints images/s and images/s per core beside
the per-worker rate cnntime's loader model uses (WorkerImagesPerS in
predictor/pipeline/pipeline.go). Rounds alternate between the worker counts and the
medians are reported, with the load average before and after: on a shared machine other
work takes cores from the workers.

With --csv FILE it also writes this computer's rate per worker (the one-worker figure: a
worker on its own core) as a loader-rate CSV that `cnntime cache import FILE` stores in
the cache; predictions for this computer's machines (user/workstation, local/...) then
scale the DataLoader by it instead of by the CPU's clock, and say so in their "cpu".

    /usr/bin/python3 scripts/dataloader_rate.py [--images 256] [--rounds 3] [--json] [--csv FILE]
    cnntime cache import FILE
"""

import argparse
import csv
import json
import platform
import socket
import os
import re
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def predictor_figure():
    """WorkerImagesPerS from predictor/pipeline/pipeline.go, or None when not found."""
    path = os.path.join(REPO, "predictor", "pipeline", "pipeline.go")
    try:
        text = open(path).read()
    except OSError:
        return None
    m = re.search(r"WorkerImagesPerS\s*=\s*([0-9.]+)", text)
    return float(m.group(1)) if m else None


def write_jpegs(folder, count, seed=0):
    """count photo-like JPEGs of about 400x350 pixels in folder/class{0,1}/."""
    import numpy as np
    from PIL import Image, ImageFilter
    rng = np.random.default_rng(seed)
    total_bytes = 0
    for i in range(count):
        w = int(rng.integers(300, 501))
        h = int(round(w * rng.uniform(0.75, 0.95)))
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        img = np.empty((h, w, 3), np.float32)
        for c in range(3):
            a, b, f = rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0.01, 0.05)
            img[..., c] = 128 + 60 * np.sin(f * (a * xx + b * yy) + rng.uniform(0, 6)) + rng.normal(0, 55, (h, w))
        pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(0.6))
        d = os.path.join(folder, f"class{i % 2}")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"img{i:05d}.jpg")
        pil.save(path, quality=90)
        total_bytes += os.path.getsize(path)
    return total_bytes / count


def cpu_model():
    """The CPU's model name (Linux /proc/cpuinfo, else platform.processor())."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or ""


def write_csv(path, rows, measured_at):
    """The loader-rate CSV `cnntime cache import` reads: the one-worker row's rate, or
    the smallest worker count's per core."""
    first = min(rows, key=lambda r: r["workers"])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["loader", "images_per_s_per_worker", "workers", "cpu", "host", "measured_at"])
        w.writerow(["pytorch", first["images_per_s_per_core"], first["workers"], cpu_model(), socket.gethostname(), measured_at])


def rate(folder, workers, batch, epochs_images):
    """Images/s a DataLoader with `workers` worker processes delivers (after one warm-up
    batch per worker, which pays for the workers' start)."""
    import torch
    import torchvision.transforms as T
    from torchvision.datasets import ImageFolder
    tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    ds = ImageFolder(folder, transform=tf)
    loader = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=True, num_workers=workers,
                                         persistent_workers=workers > 0)
    it = iter(loader)
    for _ in range(max(1, workers)):
        next(it)  # warm-up: workers started, first batches decoded
    n = 0
    start = time.perf_counter()
    for x, _ in it:
        n += x.shape[0]
    elapsed = time.perf_counter() - start
    del it, loader
    return n / elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=256, help="JPEGs to write and read per round (default 256)")
    ap.add_argument("--workers", default="1,2", help="worker counts, comma-separated (default 1,2)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, alternating the worker counts (default 3)")
    ap.add_argument("--batch", type=int, default=32, help="batch size (default 32)")
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--csv", metavar="FILE", help="write this computer's rate per worker as a CSV for `cnntime cache import FILE`")
    args = ap.parse_args()
    try:
        workers = [int(w) for w in args.workers.split(",") if w.strip()]
    except ValueError:
        ap.error(f"--workers {args.workers!r}: write whole numbers like 1,2")
    if not workers or min(workers) < 1 or args.images < args.batch * (max(workers) + 2) or args.rounds < 1:
        ap.error("need worker counts of 1 or more, --rounds of 1 or more and --images of at least batch x (workers + 2)")
    try:
        import torch
        import torchvision  # noqa: F401
    except ImportError as e:
        sys.exit(f"dataloader_rate.py needs PyTorch and torchvision ({e}); run it with /usr/bin/python3")
    torch.set_num_threads(1)  # the main process only collates
    cores = os.cpu_count() or 1
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="cnntime-jpegs-") as folder:
        mean_bytes = write_jpegs(folder, args.images)
        per = {w: [] for w in workers}
        for _ in range(args.rounds):
            for w in workers:
                per[w].append(rate(folder, w, args.batch, args.images))
    load_after = os.getloadavg()
    measured_at = int(time.time())
    figure = predictor_figure()
    rows = []
    for w in workers:
        med = statistics.median(per[w])
        used = min(w, cores)
        rows.append({"workers": w, "images_per_s": round(med, 1), "cores_used": used,
                     "images_per_s_per_core": round(med / used, 1),
                     "rounds": [round(r, 1) for r in per[w]]})
    out = {"rows": rows, "predictor_worker_images_per_s": figure, "jpeg_bytes_mean": round(mean_bytes),
           "cpu_cores": cores, "load_average_before": load_before[0], "load_average_after": load_after[0],
           "torch": torch.__version__}
    if args.csv:
        write_csv(args.csv, rows, measured_at)
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{args.images} JPEGs of ~400x350 ({mean_bytes / 1024:.0f} KiB mean) -> RandomResizedCrop(224)+flip+normalise, "
          f"batch {args.batch}, {args.rounds} rounds, {cores} cores, load average {load_before[0]:.2f} -> {load_after[0]:.2f}")
    for r in rows:
        print(f"  {r['workers']} worker(s): {r['images_per_s']:7.1f} images/s, {r['images_per_s_per_core']:6.1f} per core  (rounds {r['rounds']})")
    if figure:
        print(f"  cnntime's loader model: {figure:.0f} images/s per worker on its own core (predictor/pipeline WorkerImagesPerS)")
    if args.csv:
        print(f"  wrote {args.csv}: import it with  cnntime cache import {args.csv}")


if __name__ == "__main__":
    main()
