#!/usr/bin/env python3
"""Measure the host cost per step that a training script adds to a tight loop.

A tight loop ("lean") does forward, loss, zero_grad, backward and optimizer.step and
nothing else. torchvision's reference script (references/classification/train.py,
train_one_epoch, with utils.MetricLogger and utils.accuracy) adds per step: its
MetricLogger.log_every iteration (two time.time() reads, SmoothedValue updates of the
data and iteration times), accuracy(output, target, topk=(1, 5)) (topk, t, eq, two
slices and sums), loss.item(), acc1.item(), acc5.item(), the learning rate read and
four meter updates. Both loops run here on the CPU with a model whose compute is
negligible (a 1000-way linear layer on 8 features), so the difference per step is the
reference script's host work alone. On a GPU each .item() also waits for the GPU: the
first drains the step's queue; the others are small device-to-host copies.

    /usr/bin/python3 scripts/script_overhead.py [--batches 32,256] [--steps 2000] [--rounds 5] [--json]
"""

import argparse
import collections
import json
import statistics
import time

import torch


class SmoothedValue:
    """torchvision references/classification/utils.py SmoothedValue (window 20)."""

    def __init__(self, window_size=20):
        self.deque = collections.deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.deque.append(value)
        self.count += n
        self.total += value * n


class MetricLogger:
    """The per-step parts of torchvision's MetricLogger (printing every 10 steps is left out)."""

    def __init__(self):
        self.meters = collections.defaultdict(SmoothedValue)

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            self.meters[k].update(v)

    def log_every(self, iterable):
        end = time.time()
        iter_time, data_time = SmoothedValue(), SmoothedValue()
        for obj in iterable:
            data_time.update(time.time() - end)
            yield obj
            iter_time.update(time.time() - end)
            end = time.time()


def accuracy(output, target, topk=(1,)):
    """torchvision references/classification/utils.py accuracy."""
    with torch.inference_mode():
        maxk = max(topk)
        batch_size = target.size(0)
        if target.ndim == 2:
            target = target.max(dim=1)[1]
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target[None])
        res = []
        for k in topk:
            correct_k = correct[:k].flatten().sum(dtype=torch.float32)
            res.append(correct_k * (100.0 / batch_size))
        return res


def run(batch, steps, reference):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1000)
    criterion = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(batch, 8)
    y = torch.randint(0, 1000, (batch,))
    data = [(x, y)] * steps
    logger = MetricLogger()
    it = logger.log_every(data) if reference else iter(data)
    start = time.thread_time()
    for image, target in it:
        output = model(image)
        loss = criterion(output, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if reference:
            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            logger.update(loss=loss.item(), lr=opt.param_groups[0]["lr"])
            logger.meters["acc1"].update(acc1.item(), n=batch)
            logger.meters["acc5"].update(acc5.item(), n=batch)
            logger.meters["img/s"].update(batch / max(time.time() - start, 1e-9))
    return (time.thread_time() - start) / steps * 1000


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", default="32,256")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(1)
    out = []
    for b in [int(s) for s in a.batches.split(",")]:
        diffs, lean, ref = [], [], []
        for _ in range(a.rounds):
            l = run(b, a.steps, False)
            r = run(b, a.steps, True)
            lean.append(l)
            ref.append(r)
            diffs.append(r - l)
        out.append({"batch": b, "lean_ms": statistics.median(lean), "reference_ms": statistics.median(ref),
                    "script_ms": statistics.median(diffs)})
    if a.json:
        print(json.dumps({"torch": torch.__version__, "clock": "thread CPU time", "rows": out}))
    else:
        for r in out:
            print("batch %4d: lean %.3f ms, reference %.3f ms per step: the script adds %.3f ms" %
                  (r["batch"], r["lean_ms"], r["reference_ms"], r["script_ms"]))


if __name__ == "__main__":
    main()
