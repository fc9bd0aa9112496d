#!/usr/bin/env python3
"""Measure PyTorch's host cost per parameter tensor and count a training step's operators.

A training step in eager PyTorch does, besides the layers' kernels, work that grows with
the number of parameter tensors, not with the batch:
  - the optimizer: torch.optim.SGD with momentum and weight decay runs, per parameter
    tensor, a Python loop body of four operators (grad.add(p, alpha=wd), buf.mul_(m),
    buf.add_(grad), p.add_(buf, alpha=-lr)) when foreach=False (PyTorch 1.x's only
    implementation), or four _foreach_ operators over every tensor at once (foreach=True,
    PyTorch 2's default on CUDA);
  - zero_grad: with set_to_none=False (PyTorch 1.x's default) one zero_ per gradient, and
    then backward's AccumulateGrad adds each new gradient into it (one add per tensor);
    with set_to_none=True (PyTorch 2's default) neither;
  - batch norm's num_batches_tracked.add_(1), once per batch-norm layer in the forward.
On a GPU every one of these operators is also a kernel launch. This script times the host
side of each on the CPU with one-element tensors (so their arithmetic is nothing), on one
thread with thread CPU time (robust to other processes on the machine), and counts the
operators of a torchvision model's step with the autograd profiler.

    /usr/bin/python3 scripts/step_host_cost.py [--tensors 161] [--steps 300] [--rounds 5]
        [--models resnet50,resnet152,mobilenet_v2] [--json]
"""

import argparse
import json
import statistics
import time

import torch
import torchvision


def per_tensor_us(fn, tensors, steps, rounds):
    """Median over rounds of thread CPU time per call of fn, per tensor, in µs."""
    out = []
    for _ in range(rounds):
        fn()  # warm up
        start = time.thread_time()
        for _ in range(steps):
            fn()
        out.append((time.thread_time() - start) / steps / tensors * 1e6)
    return statistics.median(out)


def optimizer_costs(n, steps, rounds):
    params = [torch.nn.Parameter(torch.zeros(1)) for _ in range(n)]
    for p in params:
        p.grad = torch.zeros(1)
    res = {}
    for foreach in (False, True):
        opt = torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-4, foreach=foreach)
        opt.step()  # creates the momentum buffers
        res["sgd_foreach_us" if foreach else "sgd_loop_us"] = per_tensor_us(opt.step, n, steps, rounds)
    opt = torch.optim.SGD(params, lr=0.1)
    res["zero_grad_us"] = per_tensor_us(lambda: opt.zero_grad(set_to_none=False), n, steps, rounds)

    def set_none():
        for p in params:
            p.grad = torch.zeros(1)
        opt.zero_grad(set_to_none=True)

    res["set_to_none_us"] = per_tensor_us(set_none, n, steps, rounds)
    x, y = torch.zeros(1), torch.zeros(1)
    res["add_op_us"] = per_tensor_us(lambda: x.add_(y), 1, steps * 50, rounds)
    return res


def count_ops(name):
    """Operators a training step of torchvision's name runs (batch 2, 64 px), by phase."""
    model = getattr(torchvision.models, name)()
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4, foreach=False)
    x = torch.randn(2, 3, 64, 64)
    y = torch.tensor([0, 1])
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()  # momentum buffers exist from here on
    counts = {}
    with torch.autograd.profiler.profile() as prof:
        with torch.autograd.profiler.record_function("phase_zero_grad"):
            opt.zero_grad(set_to_none=False)
        with torch.autograd.profiler.record_function("phase_forward"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        with torch.autograd.profiler.record_function("phase_backward"):
            loss.backward()
        with torch.autograd.profiler.record_function("phase_optimizer"):
            opt.step()
    events = prof.function_events

    def top_level(e):
        # An operator called from Python or by an autograd node, not from inside another operator.
        q = e.cpu_parent
        while q is not None:
            if q.name.startswith("aten::"):
                return False
            q = q.cpu_parent
        return True

    for ph in (e for e in events if e.name.startswith("phase_")):
        lo, hi = ph.time_range.start, ph.time_range.end
        counts[ph.name[len("phase_"):]] = sum(
            1 for e in events
            if e.name.startswith("aten::") and lo <= e.time_range.start <= hi and top_level(e))
    counts["param_tensors"] = sum(1 for _ in model.parameters())
    counts["batchnorm_layers"] = sum(1 for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm))
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tensors", type=int, default=161, help="parameter tensors (ResNet-50 has 161)")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--models", default="resnet50,resnet152,mobilenet_v2")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(1)
    out = {"torch": torch.__version__, "clock": "thread CPU time, one thread, median of rounds",
           "per_tensor": optimizer_costs(a.tensors, a.steps, a.rounds),
           "ops": {m: count_ops(m) for m in a.models.split(",") if m}}
    if a.json:
        print(json.dumps(out))
        return
    print("PyTorch %s, %s" % (out["torch"], out["clock"]))
    for k, v in out["per_tensor"].items():
        print("  %-16s %7.2f µs" % (k, v))
    for m, c in out["ops"].items():
        print("  %-14s %s" % (m, ", ".join("%s %d" % kv for kv in c.items())))


if __name__ == "__main__":
    main()
