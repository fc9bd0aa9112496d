#!/usr/bin/env python3
"""Unit tests of pytorch_sweep.py's CUDA branches, run on the CPU with the device calls
stubbed: CUDA events that report a fixed time, synchronize, empty_cache, set_device and
device_count stand-ins; amp as bfloat16 under CPU autocast (this PyTorch has no FP16
kernels on the CPU), which exercises the same code as FP16 under CUDA autocast.

    /usr/bin/python3 -B scripts/test_pytorch_sweep.py

The Go suite runs them (app/cli TestPyTorchSweepCUDABranches)."""

import argparse
import os
import sys
import unittest
import weakref
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_sweep as ps  # noqa: E402
import torch  # noqa: E402

EVENT_MS = 2.0  # what every stub CUDA event pair reports, whatever ran between
KERNEL_MS = 0.25  # what the stub profiler reports as one call's kernel time


class FakeCUDA:
    """Stand-ins for the torch.cuda calls the script makes; timing is True between the
    first event's record and the end of a timed sample."""

    def __init__(self, devices=1):
        self.devices, self.current, self.timing, self.log = devices, None, False, []
        fake = self

        class Event:
            def __init__(self, enable_timing=False):
                self.enable_timing = enable_timing

            def record(self, stream=None):
                fake.timing = True

            def synchronize(self):
                fake.timing = False

            def elapsed_time(self, end):
                return EVENT_MS

        self.Event = Event

    def patches(self):
        c = torch.cuda
        return [mock.patch.object(c, "Event", self.Event),
                mock.patch.object(c, "synchronize", lambda device=None: None),
                mock.patch.object(c, "empty_cache", lambda: self.log.append("empty_cache")),
                mock.patch.object(c, "set_device", lambda d: setattr(self, "current", d)),
                mock.patch.object(c, "device_count", lambda: self.devices),
                mock.patch.object(c, "get_device_capability", lambda device=None: (8, 0)),
                mock.patch.object(c, "mem_get_info", lambda device=None: self.mem),
                mock.patch.object(ps, "kernel_ms", self.kernel_ms)]

    mem = (40 << 30, 80 << 30)  # free and total device bytes mem_get_info reports

    def kernel_ms(self, torch_, run, k, device):
        """The profiler's kernel time of a call: the calls run (so their failures show),
        and KERNEL_MS each is what their kernels took, whatever the host's pace."""
        self.timing = True
        for _ in range(k):
            run()
        self.timing = False
        return KERNEL_MS

    def __enter__(self):
        self._patches = self.patches()
        for p in self._patches:
            p.start()
        return self

    def __exit__(self, *exc):
        for p in reversed(self._patches):
            p.stop()


def config(key, phases, in_shapes=None, amp_in=None):
    spec = ps.parse_config_key(key)
    shapes = in_shapes or [list(spec["in"])] * spec["n"]
    return {"key": key, "spec": spec, "phases": phases, "inplace": False, "in_shapes": shapes,
            "amp_in": amp_in or ["half"] * len(shapes)}


def args(**kw):
    a = argparse.Namespace(benchmark=False, warmup=1, repeats=2, rounds=1)
    for k, v in kw.items():
        setattr(a, k, v)
    return a


CONV = config("conv2d:in=4x6x6,out=8x6x6,k=3x3,s=1x1,p=1x1,d=1x1,g=1,bias=true", ["fwd", "bwd_data", "bwd_weights"])
RELU = config("relu:in=4x6x6,out=4x6x6", ["fwd", "bwd_data"])
BN = config("batchnorm2d:in=4x6x6,out=4x6x6", ["fwd", "bwd_data"])
LINEAR = config("linear:in=16x1x1,out=10x1x1,bias=true", ["fwd", "bwd_data", "bwd_weights"])
LAYERNORM = config("layernorm:in=8x3x3,out=8x3x3", ["fwd", "bwd_data", "bwd_weights"])
SCALE = config("scale:in=8x3x3,out=8x3x3", ["fwd", "bwd_data", "bwd_weights"])


def sweep(configs, batches, precision="fp32", **kw):
    """Runs time_layers_cuda with the stubs; returns the rows emitted, in order."""
    rows = []
    with FakeCUDA():
        ps.time_layers_cuda(torch, configs, batches, args(**kw), torch.device("cpu"), precision,
                            lambda row, note="": rows.append(dict(row)),
                            half=torch.bfloat16, autocast_device="cpu")
    return rows


class LayerRowsAreTheKernelsTime(unittest.TestCase):
    def test_rows_are_the_profilers_kernel_time_not_the_events(self):
        """A layer phase is its kernels' own time from the profiler, not the CUDA events
        around the calls, which read the host's pace (the H200's backward phases never
        read below 64-90 us, and 155 of 454 pairs were slower at batch 16 than 64): the
        events here report 2 ms for anything, the kernels 0.25 ms, with nothing
        subtracted."""
        rows = sweep([CONV, RELU], [1, 2])
        self.assertEqual(len(rows), 2 * 3 + 2 * 2)
        for r in rows:
            self.assertEqual(r["status"], "ok", r)
            self.assertAlmostEqual(float(r["median_ms"]), KERNEL_MS, msg=r)
            self.assertEqual(r["repeats"], 2)
            self.assertEqual(r["policy"], "heuristic")
        self.assertEqual({r["precision"] for r in rows if r["config"] == CONV["key"]}, {"tf32"})


class AmpRunsWhatAutocastRuns(unittest.TestCase):
    def profile(self, fn):
        with torch.autograd.profiler.profile() as prof:
            fn()
        return [e.name for e in prof.function_events]

    def case(self, c, batch=2):
        autocast = lambda: torch.autocast("cpu", dtype=torch.bfloat16)
        layer = ps.Layer(torch, c, torch.device("cpu"), True, torch.bfloat16)
        return layer, ps.layer_case(torch, layer, batch, torch.device("cpu"), autocast, update=False)

    def test_convolution_and_linear_time_no_cast(self):
        for c in (CONV, LINEAR):
            layer, calls = self.case(c)
            self.assertTrue(all(p.dtype == torch.bfloat16 for p in layer.params), c["key"])
            self.assertEqual(layer.input_dtypes(), [torch.bfloat16])
            for phase, (prep, run) in calls.items():
                if prep:
                    prep()
                ops = self.profile(run)
                casts = [o for o in ops if o in ("aten::to", "aten::_to_copy")]
                self.assertEqual(casts, [], f"{c['key']} {phase} casts in its timed call: {ops}")

    def test_inputs_have_the_type_autocast_gives_them(self):
        # Batch norm after a convolution sees FP16 (here bfloat16) data with FP32 parameters.
        layer, calls = self.case(BN)
        self.assertEqual(layer.input_dtypes(), [torch.bfloat16])
        self.assertTrue(all(p.dtype == torch.float32 for p in layer.params))
        # A layer whose producer gave FP32 (the layer scale's promotion) gets FP32.
        after_scale = dict(RELU, amp_in=["float"])
        self.assertEqual(ps.Layer(torch, after_scale, torch.device("cpu"), True, torch.bfloat16).input_dtypes(), [torch.float32])
        # Layer norm is on autocast's FP32 list: its FP16 input is cast up and it runs in FP32.
        layer, calls = self.case(LAYERNORM)
        prep, run = calls["fwd"]
        prep()
        run()
        self.assertEqual(layer.input_dtypes(), [torch.bfloat16])
        rows = sweep([LAYERNORM, SCALE, BN], [2], precision="amp")
        self.assertEqual([r["status"] for r in rows], ["ok"] * 8)
        self.assertEqual({r["precision"] for r in rows}, {"amp"})

    def test_amp_types_follow_the_graph(self):
        layers = [
            {"index": 0, "op": "conv2d", "inputs": [-1]},
            {"index": 1, "op": "batchnorm2d", "inputs": [0]},
            {"index": 2, "op": "layernorm", "inputs": [1]},
            {"index": 3, "op": "linear", "inputs": [2]},
            {"index": 4, "op": "scale", "inputs": [3]},
            {"index": 5, "op": "add", "inputs": [4, 1]},
            {"index": 6, "op": "relu", "inputs": [1]},
            {"index": 7, "op": "relu", "inputs": [-1]},
        ]
        self.assertEqual(ps.amp_dtypes(layers), {-1: "float", 0: "half", 1: "half", 2: "float", 3: "half",
                                                 4: "float", 5: "float", 6: "half", 7: "float"})


class OneConfigurationAtATime(unittest.TestCase):
    def test_built_timed_freed_and_written_in_turn(self):
        """Each configuration's case is built, timed, freed and its rows written before the
        next is built: never two alive at once, and rows come as they are measured."""
        real = ps.layer_case
        events, alive = [], []

        class Calls(dict):
            pass

        def layer_case(torch_, layer, batch, device, autocast, update):
            events.append(("build", layer.c["key"], batch, len(alive)))
            calls = Calls(real(torch_, layer, batch, device, autocast, update))
            alive.append(1)
            weakref.finalize(calls, alive.pop)
            return calls

        rows = []
        with mock.patch.object(ps, "layer_case", layer_case), FakeCUDA():
            ps.time_layers_cuda(torch, [CONV, RELU], [1, 2], args(), torch.device("cpu"), "fp32",
                                lambda row, note="": events.append(("row", row["config"], row["batch_size"])),
                                half=torch.bfloat16, autocast_device="cpu")
        builds = [e for e in events if e[0] == "build"]
        self.assertEqual([(k, b) for _, k, b, _ in builds], [(CONV["key"], 1), (CONV["key"], 2), (RELU["key"], 1), (RELU["key"], 2)])
        self.assertEqual([n for *_, n in builds], [0, 0, 0, 0], "a case was still alive when the next was built")
        # Between two builds come exactly the rows of the first.
        for i, e in enumerate(events):
            if e[0] == "build":
                nxt = next((j for j in range(i + 1, len(events)) if events[j][0] == "build"), len(events))
                rows = events[i + 1:nxt]
                want = len(CONV["phases"]) if e[1] == CONV["key"] else len(RELU["phases"])
                self.assertEqual(rows, [("row", e[1], e[2])] * want, events)


class OutOfMemoryWhileTiming(unittest.TestCase):
    def test_oom_in_a_timed_call_is_recorded(self):
        """An out-of-memory raised inside the timed calls (not while building) marks that
        batch size and the larger ones oom; the smaller ones and the other configurations
        are measured, and the run goes on."""
        real = ps.layer_case
        fake = FakeCUDA()

        def layer_case(torch_, layer, batch, device, autocast, update):
            calls = real(torch_, layer, batch, device, autocast, update)
            if layer.c["key"] != CONV["key"] or batch < 3:
                return calls

            def wrap(run):
                def timed():
                    if fake.timing:
                        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
                    run()
                return timed
            return {ph: (prep, wrap(run)) for ph, (prep, run) in calls.items()}

        rows = []
        with mock.patch.object(ps, "layer_case", layer_case), fake:
            ps.time_layers_cuda(torch, [CONV, RELU], [1, 2, 3, 4], args(), torch.device("cpu"), "fp32",
                                lambda row, note="": rows.append(dict(row)), half=torch.bfloat16, autocast_device="cpu")
        status = {(r["config"], r["batch_size"], r["phase"]): r["status"] for r in rows}
        for b in (1, 2):
            self.assertEqual({status[(CONV["key"], b, ph)] for ph in CONV["phases"]}, {"ok"})
        for b in (3, 4):
            self.assertEqual({status[(CONV["key"], b, ph)] for ph in CONV["phases"]}, {"oom"})
        self.assertEqual({status[(RELU["key"], b, ph)] for b in (1, 2, 3, 4) for ph in RELU["phases"]}, {"ok"})


class OutOfMemoryByAnyName(unittest.TestCase):
    def test_cudnn_and_cublas_out_of_memory_are_oom(self):
        """cuDNN and cuBLAS report a batch that does not fit in their own words: both are
        oom rows, not a stopped sweep; another error still stops it."""
        for msg in ("CUDA out of memory. Tried to allocate 2.00 GiB",
                    "Unable to find a valid cuDNN algorithm to run convolution",
                    "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"):
            self.assertTrue(ps.is_oom(RuntimeError(msg)), msg)
            real = ps.layer_case

            def layer_case(torch_, layer, batch, device, autocast, update, msg=msg):
                calls = real(torch_, layer, batch, device, autocast, update)
                if batch < 2:
                    return calls

                def boom():
                    raise RuntimeError(msg)
                return {ph: (prep, boom) for ph, (prep, run) in calls.items()}

            rows = []
            with mock.patch.object(ps, "layer_case", layer_case), FakeCUDA():
                ps.time_layers_cuda(torch, [CONV], [1, 2, 3], args(), torch.device("cpu"), "fp32",
                                    lambda row, note="": rows.append(dict(row)), half=torch.bfloat16, autocast_device="cpu")
            status = {(r["batch_size"], r["phase"]): r["status"] for r in rows}
            self.assertEqual({status[(1, ph)] for ph in CONV["phases"]}, {"ok"}, msg)
            self.assertEqual({status[(b, ph)] for b in (2, 3) for ph in CONV["phases"]}, {"oom"}, msg)
        self.assertFalse(ps.is_oom(RuntimeError("cuDNN error: CUDNN_STATUS_EXECUTION_FAILED")))

    def test_out_of_memory_in_disguise(self):
        """cuBLAS's NOT_INITIALIZED and cuDNN's internal errors and failed executions are
        out of memory when little device memory is left (under 1/32 of it, at least
        256 MiB), a failure when plenty is."""
        gib = 1 << 30
        for msg in ("CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
                    "cuDNN error: CUDNN_STATUS_INTERNAL_ERROR", "cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"):
            self.assertTrue(ps.is_oom(RuntimeError(msg), lambda: (1 * gib, 80 * gib)), msg)
            self.assertFalse(ps.is_oom(RuntimeError(msg), lambda: (40 * gib, 80 * gib)), msg)
            self.assertFalse(ps.is_oom(RuntimeError(msg)), msg)  # no memory reading: not known
        self.assertFalse(ps.is_oom(RuntimeError("CUDA error: an illegal memory access"), lambda: (0, 80 * gib)))


class OtherFailuresAreRecorded(unittest.TestCase):
    def test_a_failed_item_is_counted_and_the_sweep_goes_on(self):
        """An error that is not out of memory (a cuDNN failure with memory to spare) leaves
        that batch size out, counted as failed, and the other batch sizes and
        configurations are measured: one bad item no longer stops the run."""
        real = ps.layer_case

        def layer_case(torch_, layer, batch, device, autocast, update):
            calls = real(torch_, layer, batch, device, autocast, update)
            if layer.c["key"] != CONV["key"] or batch != 2:
                return calls

            def boom():
                raise RuntimeError("cuDNN error: CUDNN_STATUS_EXECUTION_FAILED")
            return {ph: (prep, boom) for ph, (prep, run) in calls.items()}

        rows, failures = [], ps.Failures()
        with mock.patch.object(ps, "layer_case", layer_case), FakeCUDA():
            ps.time_layers_cuda(torch, [CONV, RELU], [1, 2, 3], args(), torch.device("cpu"), "fp32",
                                lambda row, note="": rows.append(dict(row)), half=torch.bfloat16, autocast_device="cpu",
                                failures=failures)
        seen = {(r["config"], r["batch_size"]) for r in rows}
        self.assertEqual(seen, {(CONV["key"], 1), (CONV["key"], 3), (RELU["key"], 1), (RELU["key"], 2), (RELU["key"], 3)})
        self.assertEqual(len(failures.items), 1)
        self.assertIn("batch 2", failures.items[0])


class PermuteIsAView(unittest.TestCase):
    def test_layer_norm_after_a_permute_makes_the_copy(self):
        """ConvNeXt's permute is a view: the layer norm after it gets a non-contiguous
        input and its forward pass makes the copy a step makes; a layer norm after anything
        else gets a contiguous input."""
        graph = [{"index": 0, "op": "conv2d", "inputs": [-1]},
                 {"index": 1, "op": "permute", "inputs": [0]},
                 {"index": 2, "op": "layernorm", "inputs": [1]},
                 {"index": 3, "op": "linear", "inputs": [2]},
                 {"index": 4, "op": "layernorm", "inputs": [3]}]
        self.assertEqual(ps.permuted_inputs(graph), {2})

        def copies(c):
            layer = ps.Layer(torch, c, torch.device("cpu"), True)
            calls = ps.layer_case(torch, layer, 2, torch.device("cpu"), ps.contextlib_null(), update=False)
            prep, run = calls["fwd"]
            prep()
            with torch.autograd.profiler.profile() as prof:
                run()
            names = [e.name for e in prof.function_events]
            return [n for n in names if n in ("aten::copy_", "aten::clone", "aten::contiguous")], layer

        permuted, layer = copies(dict(LAYERNORM, permuted_in=True))
        self.assertTrue(permuted, "a layer norm on a permuted view made no copy in its forward pass")
        leaves, view = layer.make_inputs(2, True)
        self.assertEqual(tuple(view(leaves)[0].shape), (2, 3, 3, 8))
        self.assertFalse(view(leaves)[0].is_contiguous())
        contiguous, _ = copies(LAYERNORM)
        self.assertEqual(contiguous, [], "a layer norm on a contiguous input copied it")


class KeptApartFromTheWorker(unittest.TestCase):
    def test_layer_rows_of_a_gpu_have_a_key_of_their_own(self):
        """PyTorch's layer rows of a GPU are kept apart from cnntime's worker's (they measure
        other things); a CPU's key is PyTorch's already, a catalog id stays."""
        self.assertEqual(ps.layer_device_key("cuda:GPU-1234", False), "cuda:GPU-1234:pytorch")
        self.assertEqual(ps.layer_device_key("cuda:GPU-1234:pytorch", False), "cuda:GPU-1234:pytorch")
        self.assertEqual(ps.layer_device_key("cpu:h:EPYC:pytorch-1-threads", True), "cpu:h:EPYC:pytorch-1-threads")
        self.assertEqual(ps.layer_device_key("a100-sxm4-80gb", False), "a100-sxm4-80gb")


class SetDevice(unittest.TestCase):
    def test_cuda_n_becomes_the_current_device(self):
        """--device cuda:1 makes GPU 1 current, so its events are recorded there."""
        with FakeCUDA(devices=2) as fake:
            d = ps.cuda_device(torch, "cuda:1")
            self.assertEqual((d.type, d.index), ("cuda", 1))
            self.assertEqual(fake.current, d)
            self.assertEqual(ps.cuda_device(torch, "cuda").index, 0)
            for bad in ("cuda:2", "cuda:x", "gpu"):
                with self.assertRaises(ValueError, msg=bad):
                    ps.cuda_device(torch, bad)


class BF16IsItsOwnKernelPrecision(unittest.TestCase):
    def test_bf16_rows_say_bf16(self):
        """--precision bf16 times the layers as autocast to bfloat16 runs them, and its rows
        are the kernel precision bf16 (the loss FP32), which cnntime's bf16 sweeps join."""
        rows = []
        with FakeCUDA():
            ps.time_layers_cuda(torch, [CONV, RELU], [2], args(), torch.device("cpu"), "bf16",
                                lambda row, note="": rows.append(dict(row)), autocast_device="cpu")
        self.assertEqual({r["precision"] for r in rows}, {"bf16"})
        self.assertEqual({r["status"] for r in rows}, {"ok"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
