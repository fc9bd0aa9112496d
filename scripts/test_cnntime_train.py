#!/usr/bin/env python3
"""Unit tests of cnntime_train.py on the CPU: the learning-rate schedule, the resumable
sampler, mixup and cutmix, LARS, the bounded timings, the step CSV's cells and a resumed
run on a tiny ImageFolder.

    /usr/bin/python3 -B scripts/test_cnntime_train.py

The Go suite runs them (scripts TestTrainScriptUnits)."""

import contextlib
import csv
import io
import math
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cnntime_train as ct  # noqa: E402
import torch  # noqa: E402


def args(*extra):
    return ct.parse_args(["--model", "resnet18", "--synthetic", "--input", "32", "--classes", "10", *extra])


class Schedule(unittest.TestCase):
    def test_warmup_then_each_schedule(self):
        cases = [
            # (flags, epoch, factor)
            (["--warmup-epochs", "5", "--warmup-start-factor", "0.1"], 0.0, 0.1),
            (["--warmup-epochs", "5", "--warmup-start-factor", "0.1"], 2.5, 0.55),
            (["--epochs", "10", "--lr-schedule", "cosine"], 5.0, 0.5),
            (["--epochs", "10", "--lr-schedule", "cosine", "--lr-min", "0.2"], 10.0, 0.2),
            (["--epochs", "10", "--warmup-epochs", "2", "--lr-schedule", "poly", "--lr-power", "2"], 6.0, 0.25),
            (["--lr-schedule", "step", "--lr-step-size", "30", "--lr-gamma", "0.1"], 65.0, 0.01),
            (["--lr-schedule", "multistep", "--lr-milestones", "30,60,80"], 59.9, 0.1),
            (["--lr-schedule", "multistep", "--lr-milestones", "30,60,80"], 80.0, 0.001),
            (["--lr-schedule", "constant"], 89.0, 1.0),
            (["--warmup-epochs", "2", "--warmup-method", "constant", "--warmup-start-factor", "0.3"], 1.5, 0.3),
            (["--warmup-epochs", "2", "--lr-schedule", "exponential", "--lr-gamma", "0.5"], 5.0, 0.125),
        ]
        for flags, epoch, want in cases:
            with self.subTest(flags=flags, epoch=epoch):
                self.assertAlmostEqual(ct.lr_factor(args(*flags), epoch), want, places=6)

    def test_bad_flags_are_refused(self):
        for flags in (["--epochs", "0"], ["--lr-schedule", "multistep"], ["--label-smoothing", "1"], ["--batch-size", "0"],
                      ["--lr-milestones", "x"]):
            with self.subTest(flags=flags), self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
                args(*flags)
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()) as err:  # neither --data nor --synthetic
            ct.parse_args(["--model", "resnet18"])
        self.assertIn("give --data PATH", err.getvalue())


class Sampler(unittest.TestCase):
    def test_ranks_share_a_padded_permutation_and_resume_skips(self):
        S = ct.make_sampler(torch)
        a, b = S(10, 0, 2, seed=3, shuffle=True), S(10, 1, 2, seed=3, shuffle=True)
        for s in (a, b):
            s.set_epoch(4)
        both = list(a) + list(b)
        self.assertEqual(sorted(both), list(range(10)))  # 10 = 2 × 5: no padding, every index once
        again = S(10, 0, 2, seed=3, shuffle=True)
        again.set_epoch(4, 2)
        self.assertEqual(list(again), list(a)[2:])  # a resumed epoch skips what was trained
        self.assertEqual(len(again), 3)
        c = S(10, 0, 2, seed=3, shuffle=True)
        c.set_epoch(5)
        self.assertNotEqual(list(c), list(a))  # another epoch, another order
        ra = [S(12, r, 3, seed=0, shuffle=False, reps=3) for r in range(3)]
        self.assertEqual([list(s) for s in ra], [[0, 1, 2, 3]] * 3)  # 4 images, each 3 times, once per process
        odd = [S(7, r, 3, seed=0, shuffle=False) for r in range(3)]
        self.assertEqual([len(s) for s in odd], [3, 3, 3])  # padded to 9 with the start
        self.assertEqual(sorted(i for s in odd for i in s), [0, 0, 1, 1, 2, 3, 4, 5, 6])


class Mixing(unittest.TestCase):
    def test_mixup_and_cutmix_weights(self):
        x = torch.zeros(4, 3, 8, 8)
        x[1:] = 1.0
        y = torch.tensor([0, 1, 2, 3])
        g = torch.Generator()
        g.manual_seed(0)
        same, none, lam = ct.mix_batch(torch, x, y, args(), g)
        self.assertIs(same, x)
        self.assertIsNone(none)
        self.assertEqual(lam, 1.0)
        torch.manual_seed(0)
        mixed, partner, lam = ct.mix_batch(torch, x, y, args("--mixup-alpha", "0.2"), g)
        self.assertEqual(partner.tolist(), [3, 0, 1, 2])  # the batch shifted by one
        self.assertTrue(0 <= lam <= 1)
        self.assertAlmostEqual(float(mixed[0].mean()), 1 - lam, places=5)  # image 0 is 0s, its partner 1s
        cut, partner, lam = ct.mix_batch(torch, x, y, args("--cutmix-alpha", "1.0"), g)
        pasted = float((cut[0] == 1).float().mean())  # the share of image 0 that its partner replaced
        self.assertAlmostEqual(pasted, 1 - lam, places=6)


class LARS(unittest.TestCase):
    def test_trust_ratio_scales_the_step(self):
        w = torch.nn.Parameter(torch.tensor([3.0, 4.0]))  # |w| = 5
        w.grad = torch.tensor([0.0, 1.0])  # |g| = 1
        opt = ct.make_lars(torch)([{"params": [w], "weight_decay": 0.0, "lars": True}], lr=1.0, momentum=0.0, eta=0.01)
        opt.step()
        # trust = eta |w| / |g| = 0.05: the step is lr × trust × g
        self.assertEqual([round(v, 6) for v in w.tolist()], [3.0, 3.95])
        b = torch.nn.Parameter(torch.tensor([1.0]))
        b.grad = torch.tensor([2.0])
        plain = ct.make_lars(torch)([{"params": [b], "weight_decay": 0.0, "lars": False}], lr=0.5, momentum=0.0, eta=0.01)
        plain.step()
        self.assertEqual(b.tolist(), [0.0])  # no trust ratio: plain SGD

    def test_lamb_trust_ratio(self):
        w = torch.nn.Parameter(torch.tensor([3.0, 4.0]))  # |w| = 5
        w.grad = torch.tensor([1.0, 0.0])
        opt = ct.make_lamb(torch)([{"params": [w], "weight_decay": 0.0, "lars": True}], lr=0.1, eps=1e-8)
        opt.step()
        # Adam's first update is sign(g) = [1, 0] (|u| = 1): the trust ratio 5 makes the step 0.1 × 5 × u
        self.assertEqual([round(v, 5) for v in w.tolist()], [2.5, 4.0])

    def test_norm_and_bias_groups(self):
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Linear(4, 2))
        groups = ct.param_groups(torch, m, args("--optimizer", "lars", "--weight-decay", "5e-5"))
        self.assertEqual([len(g["params"]) for g in groups], [2, 4])  # conv and linear weights; bn's two, two biases
        self.assertEqual([g["weight_decay"] for g in groups], [5e-5, 0.0])
        groups = ct.param_groups(torch, m, args("--norm-weight-decay", "0"))
        self.assertEqual([len(g["params"]) for g in groups], [4, 2])


class Timings(unittest.TestCase):
    def test_bounded_sample_keeps_the_spread(self):
        t = ct.Timings()
        ct.Timings.LIMIT = 8
        try:
            for i in range(40):
                t.add(float(i), 0.0)
        finally:
            ct.Timings.LIMIT = 20000
        self.assertLess(len(t.step_ms), 8)
        self.assertEqual(t.seen, 40)
        self.assertGreater(max(t.step_ms) - min(t.step_ms), 20)  # still from the whole run
        self.assertEqual(ct.Timings(t.state()).step_ms, t.step_ms)  # a checkpoint's copy reads back

    def test_summarize(self):
        self.assertEqual(ct.summarize([4.0]), (4.0, 0.0))
        self.assertEqual(ct.summarize([1.0, 2.0, 3.0, 4.0, 5.0]), (3.0, 1.0))

    def test_csv_text(self):
        for raw, want in (("=1+2", "'=1+2"), ("'=x", "''=x"), ("'abc", "'abc"), ("cpu:host", "cpu:host")):
            self.assertEqual(ct.csv_text(raw), want)


class Run(unittest.TestCase):
    """A few steps on a tiny ImageFolder: cut short, resumed, evaluated, measured."""

    def setUp(self):
        from PIL import Image
        self.dir = tempfile.mkdtemp()
        for split, n in (("train", 6), ("val", 2)):
            for c, colour in (("a", (200, 30, 30)), ("b", (30, 30, 200))):
                os.makedirs(os.path.join(self.dir, "imgs", split, c))
                for i in range(n):
                    Image.new("RGB", (40, 40), colour).save(os.path.join(self.dir, "imgs", split, c, f"{i}.jpg"))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_resume_and_steps_csv(self):
        torch.set_num_threads(1)
        base = ["--model", "resnet18", "--data", os.path.join(self.dir, "imgs"), "--input", "32", "--batch-size", "4",
                "--epochs", "2", "--workers", "0", "--timing-warmup", "0", "--print-every", "100",
                "--checkpoint-dir", os.path.join(self.dir, "ck"), "--steps-csv", os.path.join(self.dir, "steps.csv"),
                "--gpu-id", "=evil", "--ema-decay", "0.9", "--ema-every", "1"]
        self.assertEqual(ct.main(base + ["--max-steps", "2"]), 0)
        state = torch.load(os.path.join(self.dir, "ck", "checkpoint.pt"))
        self.assertEqual(state["step"], 2)
        self.assertIn("ema", state)
        self.assertEqual(ct.main(base), 0)  # resumes at step 2 of 6 (3 per epoch)
        state = torch.load(os.path.join(self.dir, "ck", "checkpoint.pt"))
        self.assertEqual(state["step"], 6)
        self.assertEqual(state["timings"]["seen"], 6)
        with open(os.path.join(self.dir, "steps.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 1)
        row = rows[0]
        self.assertEqual((row["gpu"], row["model"], row["batch_size"], row["precision"], row["status"]),
                         ("'=evil", "resnet18", "4", "fp32", "ok"))
        self.assertTrue(row["framework"].startswith("pytorch ") and "cnntime_train.py" in row["framework"])
        self.assertGreater(float(row["step_ms"]), 0)
        self.assertTrue(math.isfinite(float(row["spread_ms"])))
        self.assertIn("6 steps timed", row["source"])
        self.assertEqual(ct.main(base), 0)  # complete: nothing more to train
        self.assertEqual(torch.load(os.path.join(self.dir, "ck", "checkpoint.pt"))["step"], 6)

    def test_another_world_is_refused(self):
        base = ["--model", "resnet18", "--data", os.path.join(self.dir, "imgs"), "--input", "32", "--batch-size", "4",
                "--workers", "0", "--checkpoint-dir", os.path.join(self.dir, "ck"), "--max-steps", "1", "--print-every", "100"]
        self.assertEqual(ct.main(base), 0)
        with self.assertRaises(SystemExit) as err:
            ct.main(base[:7] + ["2"] + base[8:])  # batch 2 per process: another sampler order
        self.assertIn("Use another --checkpoint-dir", str(err.exception))


if __name__ == "__main__":
    unittest.main(verbosity=1)
