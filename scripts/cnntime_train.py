#!/usr/bin/env python3
"""Train a torchvision CNN as cnntime predicted the run, and time every step.

cnntime's launch files (`cnntime launch skypilot|slurm`) start this script: one process
per GPU under torchrun (DistributedDataParallel over every GPU of every node), or one
process on a CPU. Every setting that decides the run's speed or its epochs is a flag, so
the file passes the run cnntime predicted: the recipe (optimizer, learning-rate schedule
and warm-up, label smoothing, mixup/cutmix, automatic augmentation, random erasing,
repeated augmentation, EMA, train and validation crop sizes and interpolation, epochs,
batch), the precision, the memory format, torch.compile,
and the DataLoader's workers.

Data is an ImageFolder tree (DATA/train/CLASS/*.jpg, DATA/val/CLASS/*.jpg; val/ may be
missing: no evaluation then), or --synthetic: one batch of random images kept on the
device and reused, as cnntime's "synthetic" loader assumes (no decoding).

Each step is timed: from the moment the batch leaves the DataLoader to the end of the
optimizer's update and the per-step metric reads (loss, top-1 and top-5 accuracy read with
.item(), as torchvision's reference script does: cnntime's "reference" script cost), and
apart from it the wait for the loader. --steps-csv writes the median and spread of the
steps at the run's per-GPU batch size in cnntime's step CSV (docs/cache.md, "Step CSV
format"), so `cnntime cache import FILE` stores the run's own measurement; the row's
source gives the loader's wait and the whole iteration beside it. The file is rewritten at
every checkpoint, so a run cut short keeps what it measured.

Checkpoints (--checkpoint-dir) are written every --checkpoint-minutes and at the end of
every epoch, under a temporary name then renamed, so a preempted run never leaves half a
file; a new start with the same --checkpoint-dir resumes from the latest one, mid-epoch
where it stopped (the sampler's order is a function of the seed and the epoch, so the
batches already trained are skipped without reading them). SIGTERM and SIGUSR1 make the
run save a checkpoint at the next step and exit with status 143 (a job scheduler's
requeue, a spot instance's notice).

Precisions, as cnntime names them: fp32 is PyTorch's default (TF32 convolutions on Ampere
and later, FP32 matrix multiplies), fp32-strict turns TF32 off everywhere, tf32 turns it on
everywhere, amp is torch.autocast to FP16 with a gradient scaler, bf16 is autocast to
bfloat16 (no scaler). On a CPU, fp32, fp32-strict and tf32 all run FP32 and bf16 runs CPU
autocast; amp is refused.

    torchrun --nproc_per_node=8 cnntime_train.py --model resnet50 --data /data/imagenet \\
        --batch-size 128 --epochs 38 --optimizer sgd --lr 0.4 --warmup-epochs 5 \\
        --precision amp --channels-last --workers 11 --checkpoint-dir ckpt --steps-csv steps.csv
    /usr/bin/python3 cnntime_train.py --model resnet18 --synthetic --input 32 --batch-size 8 \\
        --max-steps 4 --steps-csv steps.csv

Runs under PyTorch 1.13 (torch.compile needs PyTorch 2) and later, with torchvision.
"""

import argparse
import csv
import datetime
import math
import os
import signal
import socket
import statistics
import sys
import time

PRECISIONS = ("fp32", "fp32-strict", "tf32", "amp", "bf16")
OPTIMIZERS = ("sgd", "nesterov", "rmsprop", "adamw", "lars", "lamb")
SCHEDULES = ("cosine", "step", "multistep", "poly", "exponential", "constant")
WARMUP_METHODS = ("linear", "constant")
INTERPOLATIONS = ("bilinear", "bicubic")
AUTO_AUGMENTS = ("none", "imagenet", "ra", "ta_wide")
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune")
STEP_COLUMNS = ["gpu", "model", "batch_size", "precision", "framework", "step_ms", "spread_ms", "status", "source", "measured_at"]
# The crop size each model's torchvision weights were trained at, as cnntime uses it
# (`cnntime models`); every other model trains at 224.
DEFAULT_INPUT = {"inception_v3": 299, "efficientnet_b1": 240, "efficientnet_b2": 288, "efficientnet_b3": 300,
                 "efficientnet_b4": 380, "efficientnet_b5": 456, "efficientnet_b6": 528, "efficientnet_b7": 600,
                 "efficientnet_v2_s": 384, "efficientnet_v2_m": 480, "efficientnet_v2_l": 480}
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # ImageNet's channel statistics
FORMULA_START = "=+-@\t\r"
EXIT_PREEMPTED = 143  # 128 + SIGTERM: a scheduler reads it as "stopped by a signal"


def csv_text(s):
    """A text cell a spreadsheet will not run as a formula: one starting with = + - @ TAB
    or CR, or an apostrophe followed by one of those or another apostrophe, gets a leading
    apostrophe, which `cnntime cache import` takes off again."""
    s = str(s)
    if s and (s[0] in FORMULA_START or (len(s) >= 2 and s[0] == "'" and (s[1] in FORMULA_START or s[1] == "'"))):
        return "'" + s
    return s


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    g = p.add_argument_group("what to train")
    g.add_argument("--model", required=True, help="a torchvision model name, e.g. resnet50")
    g.add_argument("--data", default="", help="an ImageFolder tree: DATA/train/CLASS/*.jpg and DATA/val/CLASS/*.jpg")
    g.add_argument("--synthetic", action="store_true", help="train on one batch of random images kept on the device (no loader), instead of --data")
    g.add_argument("--synthetic-images", type=int, default=1281167, help="--synthetic: images per epoch (default ImageNet-1k's)")
    g.add_argument("--classes", type=int, default=0, help="output classes (default: the ImageFolder's, 1000 with --synthetic)")
    g.add_argument("--epochs", type=float, default=90, help="training epochs (a fraction trains part of the last one)")
    g.add_argument("--batch-size", type=int, default=32, help="images per step in each process (per GPU)")
    g.add_argument("--max-steps", type=int, default=0, help="stop after this many steps in all (0: the epochs decide)")
    g.add_argument("--seed", type=int, default=0)
    g = p.add_argument_group("recipe")
    g.add_argument("--optimizer", choices=OPTIMIZERS, default="sgd", help="sgd (momentum), nesterov (SGD with Nesterov momentum), rmsprop, adamw, lars (SGD with layer-wise trust ratios, You et al. 2017), lamb (Adam with layer-wise trust ratios, You et al. 2019)")
    g.add_argument("--lr", type=float, default=0.1, help="the peak learning rate (after warm-up) for the whole global batch")
    g.add_argument("--momentum", type=float, default=0.9)
    g.add_argument("--weight-decay", type=float, default=1e-4)
    g.add_argument("--norm-weight-decay", type=float, default=None, help="weight decay of normalisation layers' parameters (default: --weight-decay)")
    g.add_argument("--eps", type=float, default=None, help="rmsprop/adamw epsilon (default: PyTorch's; torchvision's RMSProp recipes use 0.0316)")
    g.add_argument("--rmsprop-alpha", type=float, default=0.9, help="rmsprop's smoothing constant")
    g.add_argument("--lars-eta", type=float, default=0.001, help="lars' trust coefficient")
    g.add_argument("--lr-schedule", choices=SCHEDULES, default="cosine", help="the decay after warm-up, over the remaining epochs")
    g.add_argument("--lr-step-size", type=float, default=30, help="step: epochs between decays")
    g.add_argument("--lr-milestones", default="", help="multistep: epochs at which the rate decays, e.g. 30,60,80")
    g.add_argument("--lr-gamma", type=float, default=0.1, help="step, multistep: the factor at each decay; exponential: the factor per epoch")
    g.add_argument("--lr-power", type=float, default=2.0, help="poly: the decay's power")
    g.add_argument("--lr-min", type=float, default=0.0, help="cosine, poly: the rate at the end, as a fraction of --lr")
    g.add_argument("--warmup-epochs", type=float, default=0, help="linear warm-up from --warmup-start-factor x --lr")
    g.add_argument("--warmup-start-factor", type=float, default=0.01)
    g.add_argument("--warmup-method", choices=WARMUP_METHODS, default="linear", help="linear: from the start factor up to --lr; constant: the start factor throughout the warm-up")
    g.add_argument("--label-smoothing", type=float, default=0.0)
    g.add_argument("--mixup-alpha", type=float, default=0.0, help="mixup's Beta(alpha, alpha); 0: off")
    g.add_argument("--cutmix-alpha", type=float, default=0.0, help="cutmix's Beta(alpha, alpha); 0: off (with mixup too, each batch takes one of the two)")
    g.add_argument("--auto-augment", choices=AUTO_AUGMENTS, default="none", help="imagenet (AutoAugment's ImageNet policy), ra (RandAugment), ta_wide (TrivialAugmentWide)")
    g.add_argument("--random-erase", type=float, default=0.0, help="random erasing's probability")
    g.add_argument("--ra-reps", type=int, default=1, help="repeated augmentation: each image this many times an epoch, in different augmentations on different processes (1: off)")
    g.add_argument("--interpolation", choices=INTERPOLATIONS, default="bilinear", help="the resize's interpolation (training crop and validation resize)")
    g.add_argument("--ema-decay", type=float, default=0.0, help="exponential moving average of the weights per update (0: none), evaluated beside the model")
    g.add_argument("--ema-every", type=int, default=32, help="steps between EMA updates")
    g.add_argument("--train-crop-size", "--input", dest="train_crop_size", type=int, default=0, help="training crop in pixels (default: the model's own, 224 for most)")
    g.add_argument("--val-crop-size", type=int, default=0, help="validation centre crop (default: the training crop)")
    g.add_argument("--val-resize-size", type=int, default=0, help="validation resize before the crop (default: crop / 0.875)")
    g = p.add_argument_group("how it runs")
    g.add_argument("--precision", choices=PRECISIONS, default="fp32")
    g.add_argument("--channels-last", action="store_true", help="NHWC activations and weights (torch.channels_last)")
    g.add_argument("--cudnn-benchmark", action="store_true", help="torch.backends.cudnn.benchmark: time cuDNN's algorithms and keep the fastest (cnntime's policy fastest; without it, cuDNN's heuristic choice)")
    g.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch 2)")
    g.add_argument("--compile-mode", choices=COMPILE_MODES, default="default", help="torch.compile's mode (reduce-overhead replays CUDA graphs)")
    g.add_argument("--workers", type=int, default=8, help="DataLoader worker processes per GPU")
    g.add_argument("--device", default="", help="cuda or cpu (default: cuda when PyTorch sees a GPU)")
    g.add_argument("--eval-every", type=int, default=1, help="evaluate every this many epochs (0: only at the end)")
    g.add_argument("--print-every", type=int, default=50, help="steps between progress lines")
    g.add_argument("--sync-every", type=int, default=50, help="distributed: steps between the ranks' check for a stop signal")
    g = p.add_argument_group("checkpoints and measurements")
    g.add_argument("--checkpoint-dir", default="", help="where checkpoints go; a start with a checkpoint there resumes from it")
    g.add_argument("--checkpoint-minutes", type=float, default=30, help="minutes between checkpoints within an epoch (0: only at epoch ends)")
    g.add_argument("--steps-csv", default="", help="write the measured step time in cnntime's step CSV to this file")
    g.add_argument("--gpu-id", default="", help="the steps' gpu column: cnntime's catalog GPU id (default: cuda:GPU-<uuid>, or the CPU's key)")
    g.add_argument("--timing-warmup", type=int, default=20, help="steps after each start left out of the timings (allocator, cuDNN, compilation); at most half of those left to train")
    g.add_argument("--source", default="", help="a note for the step CSV's source (e.g. the launch file)")
    args = p.parse_args(argv)
    problems = []
    if bool(args.data) == args.synthetic:
        problems.append("give --data PATH (an ImageFolder tree) or --synthetic, one of the two")
    for name in ("batch_size", "synthetic_images", "ema_every", "print_every", "sync_every", "ra_reps"):
        if getattr(args, name) < 1:
            problems.append(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("workers", "max_steps", "classes", "timing_warmup", "eval_every", "train_crop_size", "val_crop_size", "val_resize_size"):
        if getattr(args, name) < 0:
            problems.append(f"--{name.replace('_', '-')} must not be negative")
    if not (args.epochs > 0) or math.isinf(args.epochs):
        problems.append("--epochs must be a positive number")
    if not (args.lr > 0):
        problems.append("--lr must be positive")
    if not (0 <= args.label_smoothing < 1) or not (0 <= args.ema_decay < 1) or not (0 <= args.random_erase <= 1):
        problems.append("--label-smoothing and --ema-decay must lie in [0, 1), --random-erase in [0, 1]")
    if args.mixup_alpha < 0 or args.cutmix_alpha < 0 or args.warmup_epochs < 0 or args.checkpoint_minutes < 0:
        problems.append("--mixup-alpha, --cutmix-alpha, --warmup-epochs and --checkpoint-minutes must not be negative")
    if args.lr_schedule == "step" and not args.lr_step_size > 0:
        problems.append("--lr-step-size must be positive")
    try:
        args.milestones = sorted(float(m) for m in args.lr_milestones.split(",") if m.strip())
    except ValueError:
        problems.append(f"--lr-milestones {args.lr_milestones!r}: give epochs like 30,60,80")
        args.milestones = []
    if args.lr_schedule == "multistep" and not args.milestones:
        problems.append("--lr-schedule multistep needs --lr-milestones")
    if problems:
        p.error("; ".join(problems))
    args.train_crop_size = args.train_crop_size or DEFAULT_INPUT.get(args.model, 224)
    args.val_crop_size = args.val_crop_size or args.train_crop_size
    args.val_resize_size = args.val_resize_size or int(round(args.val_crop_size / 0.875))
    return args


# ---- the learning rate ---------------------------------------------------------------

def lr_factor(args, epoch):
    """The learning rate at a (fractional) epoch as a fraction of --lr: the linear warm-up,
    then the schedule over the epochs that remain."""
    warm = args.warmup_epochs
    if epoch < warm:
        if args.warmup_method == "constant":
            return args.warmup_start_factor
        return args.warmup_start_factor + (1 - args.warmup_start_factor) * epoch / warm
    if args.lr_schedule == "constant":
        return 1.0
    if args.lr_schedule == "step":
        return args.lr_gamma ** math.floor(epoch / args.lr_step_size)
    if args.lr_schedule == "multistep":
        return args.lr_gamma ** sum(1 for m in args.milestones if epoch >= m)
    if args.lr_schedule == "exponential":
        return args.lr_gamma ** (epoch - warm)
    t = min(1.0, (epoch - warm) / max(args.epochs - warm, 1e-9))
    if args.lr_schedule == "cosine":
        shape = 0.5 * (1 + math.cos(math.pi * t))
    else:  # poly
        shape = (1 - t) ** args.lr_power
    return args.lr_min + (1 - args.lr_min) * shape


# ---- the optimizers ---------------------------------------------------------------------

def param_groups(torch, model, args):
    """Two groups: normalisation layers' parameters (their own weight decay, and no LARS
    trust ratio) and every other one; with lars, biases join the first group (as MLPerf's
    reference skips them)."""
    norm_types = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.LayerNorm, torch.nn.GroupNorm,
                  torch.nn.modules.instancenorm._InstanceNorm, torch.nn.LocalResponseNorm)
    plain, norm = [], []
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if not p.requires_grad:
                continue
            if isinstance(module, norm_types) or (args.optimizer in ("lars", "lamb") and name == "bias"):
                norm.append(p)
            else:
                plain.append(p)
    norm_wd = args.weight_decay if args.norm_weight_decay is None else args.norm_weight_decay
    if args.optimizer in ("lars", "lamb") and args.norm_weight_decay is None:
        norm_wd = 0.0
    groups = [{"params": plain, "weight_decay": args.weight_decay, "lars": True}]
    if norm:
        groups.append({"params": norm, "weight_decay": norm_wd, "lars": False})
    return groups


def make_lars(torch):
    class LARS(torch.optim.Optimizer):
        """SGD with momentum whose step for each parameter tensor is scaled by the trust
        ratio eta * |w| / (|g| + wd * |w|) (You, Gitman and Ginsburg 2017), for the groups
        marked lars; the others take plain SGD with momentum."""

        def __init__(self, params, lr, momentum, eta):
            super().__init__(params, dict(lr=lr, momentum=momentum, eta=eta, weight_decay=0.0, lars=True))

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                wd, eta, mom = group["weight_decay"], group["eta"], group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    d = p.grad
                    if wd:
                        d = d.add(p, alpha=wd)
                    if group["lars"]:
                        w_norm, g_norm = torch.norm(p), torch.norm(p.grad)
                        trust = torch.where((w_norm > 0) & (g_norm > 0),
                                            eta * w_norm / (g_norm + wd * w_norm), torch.ones_like(w_norm))
                        d = d.mul(trust)
                    buf = self.state[p].get("momentum_buffer")
                    if buf is None:
                        buf = self.state[p]["momentum_buffer"] = torch.clone(d).detach()
                    else:
                        buf.mul_(mom).add_(d)
                    p.add_(buf, alpha=-group["lr"])
    return LARS


def make_lamb(torch):
    class LAMB(torch.optim.Optimizer):
        """Adam's moments whose step for each parameter tensor is scaled by the trust
        ratio |w| / |update| (You et al. 2019, "Large Batch Optimization for Deep
        Learning"), for the groups marked lars; the others take plain Adam with decoupled
        weight decay."""

        def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-6):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=0.0, lars=True))

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                (b1, b2), eps, wd = group["betas"], group["eps"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state[p]
                    if not st:
                        st["step"], st["m"], st["v"] = 0, torch.zeros_like(p), torch.zeros_like(p)
                    st["step"] += 1
                    st["m"].mul_(b1).add_(p.grad, alpha=1 - b1)
                    st["v"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                    m_hat = st["m"] / (1 - b1 ** st["step"])
                    v_hat = st["v"] / (1 - b2 ** st["step"])
                    update = m_hat / (v_hat.sqrt() + eps)
                    if wd:
                        update = update.add(p, alpha=wd)
                    if group["lars"]:
                        w_norm, u_norm = torch.norm(p), torch.norm(update)
                        trust = torch.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm, torch.ones_like(w_norm))
                        update = update.mul(trust)
                    p.add_(update, alpha=-group["lr"])
    return LAMB


def make_optimizer(torch, model, args):
    groups = param_groups(torch, model, args)
    if args.optimizer in ("sgd", "nesterov"):
        return torch.optim.SGD(groups, lr=args.lr, momentum=args.momentum, nesterov=args.optimizer == "nesterov")
    if args.optimizer == "rmsprop":
        return torch.optim.RMSprop(groups, lr=args.lr, momentum=args.momentum, alpha=args.rmsprop_alpha,
                                   eps=args.eps if args.eps is not None else 1e-8)
    if args.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=args.lr, eps=args.eps if args.eps is not None else 1e-8)
    if args.optimizer == "lamb":
        return make_lamb(torch)(groups, lr=args.lr, eps=args.eps if args.eps is not None else 1e-6)
    return make_lars(torch)(groups, lr=args.lr, momentum=args.momentum, eta=args.lars_eta)


# ---- data -------------------------------------------------------------------------------

def make_sampler(torch):
    class ResumableSampler(torch.utils.data.Sampler):
        """This process's share of a permutation that depends only on the seed and the
        epoch, from a given batch on: a resumed run skips the batches it trained without
        reading them. Every process gets the same number of samples (the permutation is
        padded with its own start), as DistributedSampler does."""

        def __init__(self, size, rank, world, seed, shuffle, reps=1):
            self.size, self.rank, self.world, self.seed, self.shuffle, self.reps = size, rank, world, seed, shuffle, reps
            self.per_rank = math.ceil(size / world)
            self.epoch, self.skip = 0, 0

        def set_epoch(self, epoch, skip_samples=0):
            self.epoch, self.skip = epoch, skip_samples

        def indices(self):
            if self.shuffle:
                g = torch.Generator()
                g.manual_seed(self.seed * 100003 + self.epoch)
                order = torch.randperm(self.size, generator=g).tolist()
            else:
                order = list(range(self.size))
            if self.reps > 1:  # repeated augmentation: fewer images, each reps times, on different processes
                order = [i for i in order[: math.ceil(self.size / self.reps)] for _ in range(self.reps)][: self.size]
            order += order[: self.per_rank * self.world - self.size]
            return order[self.rank::self.world]

        def __iter__(self):
            return iter(self.indices()[self.skip:])

        def __len__(self):
            return self.per_rank - self.skip
    return ResumableSampler


def image_folders(torchvision, args):
    """The training and validation ImageFolders (validation None without DATA/val)."""
    T = torchvision.transforms
    interp = T.InterpolationMode.BICUBIC if args.interpolation == "bicubic" else T.InterpolationMode.BILINEAR
    train_tf = [T.RandomResizedCrop(args.train_crop_size, interpolation=interp), T.RandomHorizontalFlip()]
    if args.auto_augment == "imagenet":
        train_tf.append(T.AutoAugment(T.AutoAugmentPolicy.IMAGENET))
    elif args.auto_augment == "ra":
        train_tf.append(T.RandAugment())
    elif args.auto_augment == "ta_wide":
        train_tf.append(T.TrivialAugmentWide())
    train_tf += [T.ToTensor(), T.Normalize(MEAN, STD)]
    if args.random_erase > 0:
        train_tf.append(T.RandomErasing(p=args.random_erase))
    train_dir = os.path.join(args.data, "train")
    if not os.path.isdir(train_dir):
        raise SystemExit(f"cnntime_train.py: no {train_dir}: --data must hold train/CLASS/*.jpg (and val/CLASS/*.jpg)")
    train = torchvision.datasets.ImageFolder(train_dir, T.Compose(train_tf))
    val_dir = os.path.join(args.data, "val")
    val = None
    if os.path.isdir(val_dir):
        val = torchvision.datasets.ImageFolder(val_dir, T.Compose([
            T.Resize(args.val_resize_size, interpolation=interp), T.CenterCrop(args.val_crop_size), T.ToTensor(), T.Normalize(MEAN, STD)]))
    return train, val


def mix_batch(torch, x, y, args, gen):
    """Mixup or cutmix (one of them per batch when both are on): the mixed images, the
    partner labels and the weight of the batch's own labels; (x, None, 1.0) when off."""
    choices = [m for m, a in (("mixup", args.mixup_alpha), ("cutmix", args.cutmix_alpha)) if a > 0]
    if not choices:
        return x, None, 1.0
    kind = choices[int(torch.randint(len(choices), (1,), generator=gen))]
    alpha = args.mixup_alpha if kind == "mixup" else args.cutmix_alpha
    lam = float(torch.distributions.Beta(alpha, alpha).sample())
    perm = torch.roll(torch.arange(x.shape[0], device=x.device), 1)  # as torchvision: the batch shifted by one
    if kind == "mixup":
        return x.mul(lam).add_(x[perm], alpha=1 - lam), y[perm], lam
    h, w = x.shape[-2:]
    cut = math.sqrt(1 - lam)
    ch, cw = int(h * cut), int(w * cut)
    cy, cx = int(torch.randint(h, (1,), generator=gen)), int(torch.randint(w, (1,), generator=gen))
    y0, y1 = max(cy - ch // 2, 0), min(cy + ch // 2, h)
    x0, x1 = max(cx - cw // 2, 0), min(cx + cw // 2, w)
    x = x.clone()
    x[..., y0:y1, x0:x1] = x[perm][..., y0:y1, x0:x1]
    lam = 1 - (y1 - y0) * (x1 - x0) / float(h * w)
    return x, y[perm], lam


# ---- the model and its average ----------------------------------------------------------

def build_model(torchvision, name, classes):
    builder = getattr(torchvision.models, name, None)
    if builder is None or not callable(builder) or name.startswith("_"):
        raise SystemExit(f"cnntime_train.py: torchvision {torchvision.__version__} has no model {name!r}")
    kwargs = {"weights": None, "num_classes": classes}
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=False)
    return builder(**kwargs)


def logits_of(out):
    if hasattr(out, "logits"):
        return out.logits
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


class EMA:
    """An exponential moving average of a model's parameters and buffers, updated every
    --ema-every steps with the decay raised to that power (so the average's horizon in
    steps does not depend on how often it is updated)."""

    def __init__(self, torch, model, decay, every):
        import copy
        self.torch, self.every = torch, every
        self.decay = decay ** every
        self.model = copy.deepcopy(model).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)

    def update(self, model):
        with self.torch.no_grad():
            for e, p in zip(self.model.parameters(), model.parameters()):
                e.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)
            for e, b in zip(self.model.buffers(), model.buffers()):
                e.copy_(b)


# ---- timing and the step CSV --------------------------------------------------------------

def summarize(times):
    """Median and half the interquartile range, as cnntime's sweeps report them."""
    if len(times) == 1:
        return times[0], 0.0
    q1, q2, q3 = statistics.quantiles(times, n=4, method="inclusive")
    return q2, (q3 - q1) / 2


class Timings:
    """The steps' times at the run's batch size, kept bounded (every other one is dropped
    when full, so the sample stays spread over the whole run)."""
    LIMIT = 20000

    def __init__(self, state=None):
        state = state or {}
        self.step_ms = list(state.get("step_ms", []))
        self.wait_ms = list(state.get("wait_ms", []))
        self.stride = state.get("stride", 1)
        self.seen = state.get("seen", 0)

    def add(self, step_ms, wait_ms):
        self.seen += 1
        if self.seen % self.stride:
            return
        self.step_ms.append(step_ms)
        self.wait_ms.append(wait_ms)
        if len(self.step_ms) >= self.LIMIT:
            self.step_ms, self.wait_ms, self.stride = self.step_ms[::2], self.wait_ms[::2], self.stride * 2

    def state(self):
        return {"step_ms": self.step_ms, "wait_ms": self.wait_ms, "stride": self.stride, "seen": self.seen}


def cpu_model():
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


def device_key(torch, device, args):
    """The step CSV's gpu column: --gpu-id, else the GPU's UUID key, else the CPU's key
    (the one scripts/pytorch_sweep.py gives PyTorch on this CPU)."""
    if args.gpu_id:
        return args.gpu_id
    if device.type == "cuda":
        uuid = str(getattr(torch.cuda.get_device_properties(device), "uuid", "") or "")
        if uuid:
            return "cuda:" + (uuid if uuid.startswith("GPU-") else "GPU-" + uuid)
        return "cuda:" + torch.cuda.get_device_name(device)
    return f"cpu:{socket.gethostname()}:{cpu_model()}:pytorch-{torch.get_num_threads()}-threads"


def framework_text(torch, args, device):
    parts = [f"pytorch {torch.__version__}"]
    if device.type == "cpu":
        parts.append(f"cpu {torch.get_num_threads()} threads")
    parts.append("cnntime_train.py")
    if args.compile:
        parts.append("compile " + args.compile_mode)
    if args.channels_last:
        parts.append("channels_last")
    return " ".join(parts)


def write_steps_csv(path, row):
    """Writes the one-row step CSV under a temporary name, then renames it."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=STEP_COLUMNS)
        w.writeheader()
        text = ("gpu", "model", "precision", "framework", "status", "source")
        w.writerow({k: csv_text(v) if k in text else v for k, v in row.items()})
    os.replace(tmp, path)


# ---- the run ------------------------------------------------------------------------------

class Run:
    def __init__(self, args):
        import torch
        import torchvision
        self.torch, self.tv, self.args = torch, torchvision, args
        self.rank = int(os.environ.get("RANK", "0"))
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        want = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
        if want.startswith("cuda"):
            if not torch.cuda.is_available():
                raise SystemExit("cnntime_train.py: --device cuda, but PyTorch sees no CUDA GPU here")
            torch.cuda.set_device(self.local_rank)
            self.device = torch.device("cuda", self.local_rank)
        else:
            self.device = torch.device("cpu")
        if self.world > 1:
            torch.distributed.init_process_group("nccl" if self.device.type == "cuda" else "gloo")
        self.cuda = self.device.type == "cuda"
        self.set_precision()
        if args.compile and not hasattr(torch, "compile"):
            raise SystemExit(f"cnntime_train.py: --compile needs PyTorch 2 (this is {torch.__version__})")
        self.stop_signal = None
        for s in (signal.SIGTERM, signal.SIGUSR1):
            signal.signal(s, self.on_signal)

    def log(self, *parts):
        if self.rank == 0:
            print(*parts, flush=True)

    def on_signal(self, signum, frame):
        self.stop_signal = signum

    def set_precision(self):
        torch, p = self.torch, self.args.precision
        self.autocast_dtype, self.scaler = None, None
        if self.cuda:
            torch.backends.cudnn.benchmark = self.args.cudnn_benchmark
            torch.backends.cudnn.allow_tf32 = p in ("fp32", "tf32")
            torch.backends.cuda.matmul.allow_tf32 = p == "tf32"
            if p == "amp":
                self.autocast_dtype = torch.float16
                self.scaler = torch.cuda.amp.GradScaler()
            elif p == "bf16":
                self.autocast_dtype = torch.bfloat16
        elif p == "amp":
            raise SystemExit("cnntime_train.py: --precision amp is FP16 autocast on a GPU; on a CPU use bf16 or fp32")
        elif p == "bf16":
            self.autocast_dtype = torch.bfloat16

    def autocast(self):
        if self.autocast_dtype is None:
            import contextlib
            return contextlib.nullcontext()
        return self.torch.autocast(self.device.type, dtype=self.autocast_dtype)

    def setup(self):
        torch, args = self.torch, self.args
        torch.manual_seed(args.seed)
        self.train_set = self.val_set = None
        if args.synthetic:
            classes = args.classes or 1000
            self.images = args.synthetic_images
        else:
            self.train_set, self.val_set = image_folders(self.tv, args)
            classes = args.classes or len(self.train_set.classes)
            self.images = len(self.train_set)
        model = build_model(self.tv, args.model, classes).to(self.device)
        self.memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
        if args.channels_last:
            model = model.to(memory_format=torch.channels_last)
        self.model = model  # the module itself: what checkpoints and the EMA hold
        self.optimizer = make_optimizer(torch, model, args)
        self.ema = EMA(torch, model, args.ema_decay, args.ema_every) if args.ema_decay > 0 else None
        net = model
        if self.world > 1:
            net = torch.nn.parallel.DistributedDataParallel(model, device_ids=[self.local_rank] if self.cuda else None)
        if args.compile:
            net = torch.compile(net, mode=args.compile_mode)
        self.net = net
        self.criterion = torch.nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
        self.sampler = make_sampler(torch)(self.images, self.rank, self.world, args.seed, shuffle=True, reps=args.ra_reps)
        self.steps_per_epoch = math.ceil(self.sampler.per_rank / args.batch_size)
        self.total_steps = math.ceil(args.epochs * self.steps_per_epoch)
        if args.max_steps:
            self.total_steps = min(self.total_steps, args.max_steps)
        if args.synthetic:
            self.fixed_x = torch.randn(args.batch_size, 3, args.train_crop_size, args.train_crop_size,
                                       device=self.device).contiguous(memory_format=self.memory_format)
            self.fixed_y = torch.randint(0, classes, (args.batch_size,), device=self.device)
        self.mix_gen = torch.Generator()
        self.mix_gen.manual_seed(args.seed + 7919 * self.rank)

    # -- checkpoints --

    def checkpoint_path(self):
        return os.path.join(self.args.checkpoint_dir, "checkpoint.pt")

    def save(self, step, timings, why):
        if not self.args.checkpoint_dir:
            return
        if self.rank == 0:
            os.makedirs(self.args.checkpoint_dir, exist_ok=True)
            state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "step": step,
                     "timings": timings.state(), "args": vars(self.args), "world": self.world,
                     "saved_at": datetime.datetime.now(datetime.timezone.utc).isoformat()}
            if self.scaler is not None:
                state["scaler"] = self.scaler.state_dict()
            if self.ema is not None:
                state["ema"] = self.ema.model.state_dict()
            path = self.checkpoint_path()
            tmp = f"{path}.{os.getpid()}.tmp"
            self.torch.save(state, tmp)
            os.replace(tmp, path)
            self.log(f"checkpoint at step {step} ({why}): {path}")
        if self.world > 1:
            self.torch.distributed.barrier()

    def resume(self):
        """The step to start from and the timings so far: the latest checkpoint's, else 0."""
        args = self.args
        path = self.checkpoint_path() if args.checkpoint_dir else ""
        if not path or not os.path.exists(path):
            return 0, Timings()
        state = self.torch.load(path, map_location=self.device)
        if state.get("world") != self.world or state["args"].get("batch_size") != args.batch_size:
            raise SystemExit(f"cnntime_train.py: {path} was written by {state.get('world')} processes at batch "
                             f"{state['args'].get('batch_size')} per process; this run has {self.world} at {args.batch_size}: "
                             "the sampler's order would differ. Use another --checkpoint-dir, or the same processes and batch")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scaler is not None and "scaler" in state:
            self.scaler.load_state_dict(state["scaler"])
        if self.ema is not None and "ema" in state:
            self.ema.model.load_state_dict(state["ema"])
        self.log(f"resuming from {path}: step {state['step']} of {self.total_steps} (saved {state.get('saved_at', '?')})")
        return state["step"], Timings(state.get("timings"))

    # -- measurement --

    def write_steps(self, timings):
        args = self.args
        if not args.steps_csv or self.rank != 0 or not timings.step_ms:
            return
        step, spread = summarize(timings.step_ms)
        wait, _ = summarize(timings.wait_ms)
        host = socket.gethostname()
        where = self.torch.cuda.get_device_name(self.device) if self.cuda else cpu_model()
        note = f"; {args.source}" if args.source else ""
        source = (f"cnntime_train.py on {host} ({where}, {self.world} processes, {args.workers} workers each, "
                  f"input {args.train_crop_size}; {len(timings.step_ms)} steps timed, loader wait median {wait:.2f} ms, "
                  f"iteration {step + wait:.2f} ms{note})")
        write_steps_csv(args.steps_csv, {
            "gpu": device_key(self.torch, self.device, args), "model": args.model, "batch_size": args.batch_size,
            "precision": args.precision, "framework": framework_text(self.torch, args, self.device),
            "step_ms": f"{step:.4f}", "spread_ms": f"{spread:.4f}", "status": "ok", "source": source,
            "measured_at": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")})

    # -- training --

    def batches(self, epoch, skip):
        """The epoch's batches from batch skip on, as (x, y) on the host (or the device,
        synthetic), each with the seconds the loader kept the step waiting."""
        args = self.args
        if args.synthetic:
            for _ in range(skip, self.steps_per_epoch):
                yield self.fixed_x, self.fixed_y
            return
        self.sampler.set_epoch(epoch, skip * args.batch_size)
        loader = self.torch.utils.data.DataLoader(
            self.train_set, batch_size=args.batch_size, sampler=self.sampler, num_workers=args.workers,
            pin_memory=self.cuda, drop_last=False, persistent_workers=False)
        yield from loader

    def stop_requested(self, step):
        if self.world == 1:
            return self.stop_signal is not None
        if step % self.args.sync_every:
            return False
        flag = self.torch.tensor([1.0 if self.stop_signal is not None else 0.0], device=self.device)
        self.torch.distributed.all_reduce(flag)
        return flag.item() > 0

    def train(self):
        torch, args = self.torch, self.args
        self.setup()
        step, timings = self.resume()
        if step >= self.total_steps:
            self.log(f"the run is complete ({step} of {self.total_steps} steps in {self.checkpoint_path()}); nothing to train")
            self.write_steps(timings)
            return 0
        self.log(f"training {args.model} on {self.images} images, {self.world} process(es) at batch {args.batch_size} "
                 f"({args.batch_size * self.world} global), {self.total_steps} steps ({self.steps_per_epoch} per epoch), "
                 f"{args.precision}{', channels_last' if args.channels_last else ''}"
                 f"{', compile ' + args.compile_mode if args.compile else ''}, device {self.device}")
        started, last_save = time.perf_counter(), time.perf_counter()
        # The first steps of a start are left out of the timings; a short run keeps half.
        timed_from = step + min(args.timing_warmup, (self.total_steps - step) // 2)
        self.net.train()
        while step < self.total_steps:
            epoch, skip = divmod(step, self.steps_per_epoch)
            self.sampler.set_epoch(epoch)
            t0 = time.perf_counter()
            for x, y in self.batches(epoch, skip):
                t1 = time.perf_counter()
                self.optimizer_lr(step)
                loss, acc1, acc5 = self.step(x, y, step)
                t2 = time.perf_counter()
                step += 1
                if step > timed_from and x.shape[0] == args.batch_size:
                    timings.add((t2 - t1) * 1000, (t1 - t0) * 1000)
                if step % args.print_every == 0 or step == self.total_steps:
                    ms = summarize(timings.step_ms[-args.print_every:])[0] if timings.step_ms else float("nan")
                    self.log(f"epoch {step / self.steps_per_epoch:.3f} step {step}/{self.total_steps} loss {loss:.4f} "
                             f"acc1 {acc1:.2f} acc5 {acc5:.2f} lr {self.optimizer.param_groups[0]['lr']:.5g} step {ms:.1f} ms")
                if self.stop_requested(step):
                    self.save(step, timings, f"signal {self.stop_signal or 'on another rank'}")
                    self.write_steps(timings)
                    self.log("stopped by a signal; a new start with the same --checkpoint-dir resumes")
                    return EXIT_PREEMPTED
                if step >= self.total_steps:
                    break
                if args.checkpoint_minutes and time.perf_counter() - last_save > 60 * args.checkpoint_minutes:
                    self.save(step, timings, f"{args.checkpoint_minutes:g} minutes")
                    self.write_steps(timings)
                    last_save = time.perf_counter()
                if step % self.steps_per_epoch == 0:
                    break
                t0 = time.perf_counter()
            done_epochs = step // self.steps_per_epoch
            at_end = step >= self.total_steps
            if step % self.steps_per_epoch == 0 or at_end:
                if at_end or (args.eval_every and done_epochs % args.eval_every == 0):
                    self.evaluate(done_epochs if not at_end else step / self.steps_per_epoch)
                    self.net.train()
                self.save(step, timings, "epoch end" if not at_end else "the end")
                self.write_steps(timings)
                last_save = time.perf_counter()
        hours = (time.perf_counter() - started) / 3600
        if timings.step_ms:
            med, spread = summarize(timings.step_ms)
            self.log(f"done: {step} steps in {hours:.3f} h this start; step {med:.2f} ms ±{spread:.2f} "
                     f"(loader wait {summarize(timings.wait_ms)[0]:.2f} ms) at batch {args.batch_size}")
        self.write_steps(timings)
        if args.steps_csv and self.rank == 0:
            self.log(f"step times in {args.steps_csv}: cnntime cache import {args.steps_csv}")
        return 0

    def optimizer_lr(self, step):
        lr = self.args.lr * lr_factor(self.args, step / self.steps_per_epoch)
        for g in self.optimizer.param_groups:
            g["lr"] = lr

    def step(self, x, y, step):
        torch, args = self.torch, self.args
        x = x.to(self.device, non_blocking=True).contiguous(memory_format=self.memory_format)
        y = y.to(self.device, non_blocking=True)
        x, y_mix, lam = mix_batch(torch, x, y, args, self.mix_gen)
        self.optimizer.zero_grad(set_to_none=True)
        with self.autocast():
            out = logits_of(self.net(x))
            loss = self.criterion(out, y)
            if y_mix is not None:
                loss = lam * loss + (1 - lam) * self.criterion(out, y_mix)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        if self.ema is not None and (step + 1) % args.ema_every == 0:
            self.ema.update(self.model)
        acc1, acc5 = accuracy(torch, out, y)
        # The per-step reads of torchvision's reference script (cnntime's "reference"
        # script cost): each waits for the step's kernels.
        return loss.item(), acc1.item(), acc5.item()

    def evaluate(self, epoch):
        torch, args = self.torch, self.args
        if self.val_set is None:
            if not args.synthetic:
                self.log(f"epoch {epoch:g}: no val/ folder, nothing evaluated")
            return
        shard = torch.utils.data.Subset(self.val_set, list(range(self.rank, len(self.val_set), self.world)))
        loader = torch.utils.data.DataLoader(shard, batch_size=args.batch_size, num_workers=args.workers, pin_memory=self.cuda)
        models = [("model", self.model)] + ([("ema", self.ema.model)] if self.ema is not None else [])
        for name, model in models:
            model.eval()
            sums = torch.zeros(3, device=self.device)
            with torch.no_grad(), self.autocast():
                for x, y in loader:
                    x = x.to(self.device, non_blocking=True).contiguous(memory_format=self.memory_format)
                    y = y.to(self.device, non_blocking=True)
                    out = logits_of(model(x))
                    a1, a5 = accuracy(torch, out, y)
                    n = y.shape[0]
                    sums += torch.stack([a1 * n / 100, a5 * n / 100, torch.tensor(float(n), device=self.device)])
            if self.world > 1:
                torch.distributed.all_reduce(sums)
            c1, c5, n = sums.tolist()
            self.log(f"epoch {epoch:g} {name}: top-1 {100 * c1 / max(n, 1):.2f}% top-5 {100 * c5 / max(n, 1):.2f}% on {int(n)} images")


def accuracy(torch, out, y):
    with torch.no_grad():
        k = min(5, out.shape[1])
        top = out.topk(k, dim=1).indices
        hit = top.eq(y.unsqueeze(1))
        return hit[:, :1].float().sum() * 100 / y.shape[0], hit.any(dim=1).float().sum() * 100 / y.shape[0]


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as err:
        sys.exit(f"cnntime_train.py needs PyTorch and torchvision ({err})")
    run = Run(args)
    try:
        code = run.train()
    finally:
        if run.world > 1 and run.torch.distributed.is_initialized():
            run.torch.distributed.destroy_process_group()
    return code


if __name__ == "__main__":
    sys.exit(main())
