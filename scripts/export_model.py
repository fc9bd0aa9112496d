#!/usr/bin/env python3
"""Export a PyTorch CNN for cnntime: an ONNX file that `cnntime model import` reads, or a
cnntime custom model file (JSON) made directly by tracing the module with torch.fx.

    /usr/bin/python3 scripts/export_model.py torchvision.models:resnet50 --out my_resnet.onnx
    cnntime model import my_resnet.onnx

    /usr/bin/python3 scripts/export_model.py mynet:Net --input 32 --out mynet.json
    cnntime model import mynet.json        (or: cnntime predict --model mynet.json ...)

MODULE:NAME names a Python module (importable from the current directory or PYTHONPATH)
and, in it, a class or function that returns the nn.Module (called with the --arg
KEY=VALUE keyword arguments, each VALUE a Python literal), or an nn.Module instance.

The module is exported as it trains: in training mode, so that batch norm stays a layer
of its own (eval mode folds it into the convolutions) and dropout and stochastic depth are
in the graph. The ONNX file leaves the weights out unless --weights is given: cnntime
counts parameters from the weights' shapes, which the file keeps either way.

--out FILE.onnx: torch.onnx.export at --opset (17: LayerNormalization and HardSwish are
single ops), training mode, the image input named "image" of shape [1, C, N, N].
torch.bernoulli (stochastic depth, DropPath) has no ONNX export in PyTorch 1.13; the
script exports it as RandomUniformLike < p, which cnntime reads as the random mask it is.

--out FILE.json: torch.fx traces the module and torch.fx's ShapeProp runs it on a batch of
two images; each node becomes a cnntime layer named after its module (or fx's name for a
function), with ReLU's inplace flag kept. Nodes cnntime has no layer for are refused with
their name; export to ONNX then, which knows more ops (Shape arithmetic, patterns).

Needs PyTorch (Debian: python3-torch); torchvision only for its models.
"""

import argparse
import ast
import importlib
import json
import operator
import os
import sys


def fail(msg):
    sys.exit(f"export_model.py: {msg}")


def load(target, kwargs):
    import torch
    if ":" not in target:
        fail(f"{target!r}: give MODULE:NAME, e.g. torchvision.models:resnet50 or mynet:Net")
    mod_name, attr = target.split(":", 1)
    sys.path.insert(0, os.getcwd())
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        fail(f"cannot import {mod_name}: {e}")
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            fail(f"{mod_name} has no {attr}")
        obj = getattr(obj, part)
    if isinstance(obj, torch.nn.Module):
        if kwargs:
            fail(f"{target} is a module instance: --arg applies to a class or function")
        return obj, attr.split(".")[-1]
    if not callable(obj):
        fail(f"{target} is neither an nn.Module nor a class or function that makes one")
    model = obj(**kwargs)
    if not isinstance(model, torch.nn.Module):
        fail(f"{target}(...) returned {type(model).__name__}, not an nn.Module")
    return model, attr.split(".")[-1]


def parse_args_kv(pairs):
    out = {}
    for p in pairs:
        if "=" not in p:
            fail(f"--arg {p!r}: write KEY=VALUE, e.g. --arg num_classes=10")
        k, v = p.split("=", 1)
        try:
            out[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            out[k] = v  # a bare word: a string
    return out


# ---------------------------------------------------------------- ONNX


def register_bernoulli():
    """Exports aten::bernoulli (stochastic depth's noise.bernoulli_(p)) as uniform < p."""
    import torch
    from torch.onnx import symbolic_helper

    def bernoulli(g, input, *args):
        # aten::bernoulli(self, generator) draws with probabilities self;
        # aten::bernoulli.p(self, float p, generator) with the number p.
        u = g.op("RandomUniformLike", input, high_f=1.0, low_f=0.0, dtype_i=1)
        if len(args) == 2:
            p = symbolic_helper._maybe_get_const(args[0], "f")
            prob = g.op("Constant", value_t=torch.tensor(float(p), dtype=torch.float32))
        else:
            prob = input
        return g.op("Cast", g.op("Less", u, prob), to_i=1)

    for opset in range(9, 18):
        torch.onnx.register_custom_op_symbolic("aten::bernoulli", bernoulli, opset)


def export_onnx(model, image, out, weights, opset):
    import torch
    register_bernoulli()
    model.train()
    torch.onnx.export(model, image, out, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      export_params=weights, opset_version=opset, input_names=["image"])


# ---------------------------------------------------------------- torch.fx → cnntime JSON


class Unsupported(Exception):
    pass


class Act:
    """An activation: the cnntime layer whose output it is and its layout."""

    def __init__(self, layer, shape, layout):
        self.layer, self.shape, self.layout = layer, list(shape), layout

    def chw(self):
        s = self.shape
        if self.layout == "nchw":
            return [s[1], s[2], s[3]]
        if self.layout == "nhwc":
            return [s[3], s[1], s[2]]
        return [s[1], 1, 1]


class Param:
    def __init__(self, shape):
        self.shape = list(shape)


class Chunks:
    """The list a chunk or split returns: (start, size) of each piece along the channels."""

    def __init__(self, src, pieces):
        self.src, self.pieces = src, pieces


def to_cnntime(model, name, channels, size):
    import torch
    import torch.fx
    from torch.fx.passes.shape_prop import ShapeProp
    import torch.nn as nn
    import torch.nn.functional as F

    leaf_types = [nn.LayerNorm]
    autowrap = []
    try:
        import torchvision
        from torchvision.ops.stochastic_depth import StochasticDepth
        from torchvision.ops.misc import Permute
        leaf_types += [StochasticDepth, Permute]
        autowrap.append(torchvision.models.shufflenetv2.channel_shuffle)
    except (ImportError, AttributeError):
        StochasticDepth = Permute = ()

    class Tracer(torch.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, tuple(leaf_types)) or super().is_leaf_module(m, qualname)

    model.train()
    tracer = Tracer(autowrap_functions=tuple(autowrap))
    try:
        graph = tracer.trace(model)
    except Exception as e:  # fx raises many kinds
        raise Unsupported(f"torch.fx cannot trace the module ({type(e).__name__}: {e}); export to ONNX instead (--out FILE.onnx)")
    gm = torch.fx.GraphModule(tracer.root, graph)
    ShapeProp(gm).propagate(torch.randn(2, channels, size, size))
    modules = dict(gm.named_modules())

    layers, vals, used = [], {}, {"input", "loss"}

    def shape_of(node):
        meta = node.meta.get("tensor_meta")
        if meta is None or not hasattr(meta, "shape"):
            raise Unsupported(f"node {node.name} ({node.op} {node.target}) has no single tensor output")
        return list(meta.shape)

    def unique(n):
        n = n or "layer"
        base, k = n, 2
        while n in used:
            n, k = f"{base}_{k}", k + 1
        used.add(n)
        return n

    def emit(node, op, inputs, layout=None, **args):
        lname = unique(node.target if node.op == "call_module" else node.name)
        layer = {"name": lname, "op": op, "inputs": [a.layer for a in inputs]}
        layer.update({k: v for k, v in args.items() if v is not None})
        layers.append(layer)
        shape = shape_of(node)
        if layout is None:
            layout = inputs[0].layout if len(shape) == len(inputs[0].shape) else ("flat" if len(shape) == 2 else "nchw")
        return Act(lname, shape, layout)

    def act(v, node):
        if not isinstance(v, Act):
            raise Unsupported(f"node {node.name} ({node.target}) reads {v!r}, not an activation")
        return v

    def arg(node, i, key, default=None):
        if len(node.args) > i:
            return node.args[i]
        return node.kwargs.get(key, default)

    def val(a):
        if isinstance(a, torch.fx.Node):
            return vals[a]
        if isinstance(a, (list, tuple)):
            return [val(x) for x in a]
        return a

    def pair(v):
        if isinstance(v, int):
            return [v, v]
        v = list(v)
        return v if len(v) == 2 else None

    def square(node, k, s, p):
        if k is None or s is None or p is None or k[0] != k[1] or s[0] != s[1] or p[0] != p[1]:
            raise Unsupported(f"node {node.name}: cnntime's pooling takes square windows, not kernel {k}, stride {s}, padding {p}")
        return k, s, p

    def unary(node, op, x, inplace=False):
        return emit(node, op, [x], inplace=True if inplace else None)

    def binary(node, kind, a, b):
        if isinstance(a, Act) and isinstance(b, Act):
            if kind == "add":
                return emit(node, "add", [a, b])
            x, s = (a, b) if _numel(a.shape) >= _numel(b.shape) else (b, a)
            return emit(node, "mul", [x, s], layout=x.layout)
        x, o = (a, b) if isinstance(a, Act) else (b, a)
        if not isinstance(x, Act):
            return None  # arithmetic on numbers
        if isinstance(o, (int, float)):
            return x  # a constant: cnntime leaves the elementwise kernel out
        if kind == "mul" and isinstance(o, Param) and _numel(o.shape) == x.chw()[0]:
            return emit(node, "scale", [x])
        raise Unsupported(f"node {node.name}: {kind} of an activation and {type(o).__name__} is not a layer cnntime has")

    def pool_args(node, k, s, p, ceil):
        k, s, p = pair(k), pair(s if s not in (None, []) else k), pair(p)
        k, s, p = square(node, k, s, p)
        return dict(kernel=k, stride=s, padding=p, ceil_mode=True if ceil else None)

    def mean(node, x, dims, keep):
        dims = sorted(d % len(x.shape) for d in ([dims] if isinstance(dims, int) else dims))
        if x.layout != "nchw" or dims != [2, 3]:
            raise Unsupported(f"node {node.name}: a mean over {dims} of {x.shape} is not global average pooling")
        y = emit(node, "adaptiveavgpool2d", [x], size=1)
        if not keep:
            y = Act(y.layer, y.shape, "nchw")
            lname = unique(node.name + "_flatten")
            layers.append({"name": lname, "op": "flatten", "inputs": [y.layer]})
            y = Act(lname, shape_of(node), "flat")
        return y

    def permute(node, x, dims):
        dims = list(dims)
        if x.layout == "nchw" and dims == [0, 2, 3, 1]:
            return emit(node, "permute", [x], layout="nhwc")
        if x.layout == "nhwc" and dims == [0, 3, 1, 2]:
            return emit(node, "permute", [x], layout="nchw")
        raise Unsupported(f"node {node.name}: permute {dims} of a {x.layout} tensor: cnntime permutes between NCHW and channels-last only")

    def view(node, x):
        shape = shape_of(node)
        if shape == x.shape:
            return x
        if len(shape) == 2 and shape[0] == x.shape[0]:
            return x if x.layout == "flat" else emit(node, "flatten", [x], layout="flat")
        if len(shape) == 4 and x.layout == "flat" and shape[2:] == [1, 1]:
            return Act(x.layer, shape, "nchw")
        raise Unsupported(f"node {node.name}: reshape of {x.shape} to {shape}: cnntime imports flattening reshapes only")

    def chunks(node, x, sizes):
        start, pieces = 0, []
        for s in sizes:
            pieces.append((start, s))
            start += s
        return Chunks(x, pieces)

    def layer_norm(node, x, normalized):
        c = x.chw()[0]
        if list(normalized) != [c] or x.layout not in ("nhwc", "flat", "nchw"):
            raise Unsupported(f"node {node.name}: layer norm over {list(normalized)} of {x.shape}: cnntime normalizes over the channels")
        return emit(node, "layernorm", [x])

    def activation_fn(name):
        return {"relu": "relu", "relu_": "relu", "relu6": "relu6", "silu": "silu", "hardswish": "hardswish",
                "hardsigmoid": "hardsigmoid", "sigmoid": "sigmoid", "gelu": "gelu"}.get(name)

    for node in gm.graph.nodes:
        if node.op == "placeholder":
            if vals:
                raise Unsupported(f"the module takes a second input {node.name}: cnntime imports CNNs that take one batch of images")
            vals[node] = Act("input", [2, channels, size, size], "nchw")
            continue
        if node.op == "get_attr":
            t = gm
            for part in node.target.split("."):
                t = getattr(t, part)
            vals[node] = Param(t.shape) if isinstance(t, torch.Tensor) else t
            continue
        if node.op == "output":
            outs = []

            def collect(v):
                if isinstance(v, Act):
                    outs.append(v)
                elif isinstance(v, (list, tuple)):
                    for x in v:
                        collect(x)
                elif isinstance(v, dict):
                    for x in v.values():
                        collect(x)

            collect(val(node.args[0]))
            if not outs:
                raise Unsupported("the module returns no tensor computed from its input")
            classes = {o.chw()[0] for o in outs}
            if len(classes) != 1 or any(o.chw()[1:] != [1, 1] for o in outs):
                raise Unsupported(f"the module returns {[o.shape for o in outs]}: cnntime trains classifiers whose outputs are class scores [N, classes]")
            layers.append({"name": "loss", "op": "crossentropy", "inputs": [o.layer for o in outs]})
            return {"name": name, "input": [channels, size, size], "classes": classes.pop(), "layers": layers}

        args = [val(a) for a in node.args]
        if node.op == "call_module":
            m = modules[node.target]
            x = act(args[0], node)
            if isinstance(m, nn.Conv2d):
                if m.padding_mode != "zeros" or isinstance(m.padding, str) or m.dilation[0] != m.dilation[1]:
                    raise Unsupported(f"conv {node.target}: cnntime's convolutions pad with zeros, symmetrically, and dilate height and width alike")
                y = emit(node, "conv2d", [x], out=m.out_channels, kernel=list(m.kernel_size), stride=list(m.stride),
                         padding=list(m.padding), dilation=m.dilation[0], groups=m.groups, bias=m.bias is not None)
            elif isinstance(m, nn.Linear):
                y = emit(node, "linear", [x], out=m.out_features, bias=m.bias is not None)
            elif isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d)):
                y = emit(node, "batchnorm2d", [x])
            elif isinstance(m, nn.LayerNorm):
                y = layer_norm(node, x, m.normalized_shape)
            elif isinstance(m, (nn.ReLU, nn.ReLU6, nn.SiLU, nn.Hardswish, nn.Hardsigmoid, nn.Sigmoid, nn.GELU)):
                op = {nn.ReLU: "relu", nn.ReLU6: "relu6", nn.SiLU: "silu", nn.Hardswish: "hardswish",
                      nn.Hardsigmoid: "hardsigmoid", nn.Sigmoid: "sigmoid", nn.GELU: "gelu"}[type(m)]
                y = unary(node, op, x, getattr(m, "inplace", False))
            elif isinstance(m, (nn.MaxPool2d, nn.AvgPool2d)):
                if isinstance(m, nn.MaxPool2d) and m.dilation not in (1, (1, 1)):
                    raise Unsupported(f"pool {node.target}: cnntime's pooling does not dilate")
                op = "maxpool2d" if isinstance(m, nn.MaxPool2d) else "avgpool2d"
                y = emit(node, op, [x], **pool_args(node, m.kernel_size, m.stride, m.padding, m.ceil_mode))
            elif isinstance(m, nn.AdaptiveAvgPool2d):
                s = pair(m.output_size)
                if s is None or s[0] != s[1] or s[0] is None:
                    raise Unsupported(f"pool {node.target}: cnntime's adaptive pooling is square, not {m.output_size}")
                y = emit(node, "adaptiveavgpool2d", [x], size=s[0])
            elif isinstance(m, (nn.Dropout, nn.Dropout2d, nn.AlphaDropout)):
                y = emit(node, "dropout", [x])
            elif isinstance(m, nn.Flatten):
                if m.start_dim != 1:
                    raise Unsupported(f"flatten {node.target} from dim {m.start_dim}: cnntime flattens from dim 1")
                y = x if x.layout == "flat" else emit(node, "flatten", [x], layout="flat")
            elif isinstance(m, nn.Identity):
                y = x
            elif StochasticDepth and isinstance(m, StochasticDepth):
                y = emit(node, "stochasticdepth", [x]) if m.p > 0 else x
            elif Permute and isinstance(m, Permute):
                y = permute(node, x, m.dims)
            elif isinstance(m, nn.ChannelShuffle):
                y = emit(node, "channelshuffle", [x], groups=m.groups)
            elif isinstance(m, (nn.Softmax, nn.LogSoftmax)):
                y = x  # the cross-entropy loss computes it
            else:
                raise Unsupported(f"module {node.target} ({type(m).__name__}) has no cnntime layer: replace it with one cnntime models (docs/models.md, \"Your own CNN\"); the ONNX route (--out FILE.onnx) maps more patterns")
            vals[node] = y
            continue

        fn = node.target if node.op == "call_method" else getattr(node.target, "__name__", str(node.target))
        if node.op == "call_function" and node.target is operator.getitem:
            src, i = args[0], args[1]
            if isinstance(src, Chunks):
                start, size_ = src.pieces[i]
                x = src.src
                if start == 0 and size_ == x.chw()[0]:
                    vals[node] = x
                else:
                    vals[node] = emit(node, "slice", [x], start=start, out=size_)
            elif isinstance(src, (list, tuple)):
                vals[node] = src[i]
            else:
                vals[node] = None  # a size or a shape: not a tensor
            continue
        first = args[0] if args else None
        if fn in ("add", "iadd", "add_"):
            y = binary(node, "add", first, args[1] if len(args) > 1 else node.kwargs.get("other"))
        elif fn in ("mul", "imul", "mul_"):
            y = binary(node, "mul", first, args[1] if len(args) > 1 else node.kwargs.get("other"))
        elif fn in ("truediv", "div", "sub", "div_", "sub_") and isinstance(first, Act) and isinstance(args[1], (int, float)):
            y = first
        elif fn in ("cat", "concat"):
            xs = [act(v, node) for v in (first if isinstance(first, list) else [first])]
            dim = arg(node, 1, "dim", 0) % len(xs[0].shape)
            want = 3 if xs[0].layout == "nhwc" else 1
            if dim != want:
                raise Unsupported(f"node {node.name}: cat along dim {dim}: cnntime concatenates along the channels")
            y = xs[0] if len(xs) == 1 else emit(node, "concat", xs)
        elif fn == "flatten":
            x = act(first, node)
            if arg(node, 1, "start_dim", 0) != 1:
                raise Unsupported(f"node {node.name}: flatten from dim {arg(node, 1, 'start_dim', 0)}: cnntime flattens from dim 1")
            y = x if x.layout == "flat" else emit(node, "flatten", [x], layout="flat")
        elif activation_fn(fn):
            y = unary(node, activation_fn(fn), act(first, node), fn.endswith("_") or node.kwargs.get("inplace", False))
        elif fn == "adaptive_avg_pool2d":
            s = pair(arg(node, 1, "output_size"))
            if s is None or s[0] != s[1]:
                raise Unsupported(f"node {node.name}: adaptive pooling to {s}: cnntime's is square")
            y = emit(node, "adaptiveavgpool2d", [act(first, node)], size=s[0])
        elif fn in ("max_pool2d", "avg_pool2d"):
            op = "maxpool2d" if fn == "max_pool2d" else "avgpool2d"
            y = emit(node, op, [act(first, node)], **pool_args(node, arg(node, 1, "kernel_size"), arg(node, 2, "stride"),
                                                                arg(node, 3, "padding", 0), arg(node, 5 if fn == "max_pool2d" else 4, "ceil_mode", False)))
        elif fn in ("dropout", "dropout2d"):
            y = emit(node, "dropout", [act(first, node)])
        elif fn == "mean":
            y = mean(node, act(first, node), arg(node, 1, "dim"), arg(node, 2, "keepdim", False))
        elif fn == "permute":
            dims = args[1:] if node.op == "call_method" and len(args) > 2 else arg(node, 1, "dims")
            y = permute(node, act(first, node), dims)
        elif fn in ("view", "reshape"):
            y = view(node, act(first, node))
        elif fn in ("chunk",):
            x = act(first, node)
            n, dim = arg(node, 1, "chunks"), arg(node, 2, "dim", 0) % len(x.shape)
            if dim != 1 or x.layout != "nchw":
                raise Unsupported(f"node {node.name}: chunk along dim {dim}: cnntime slices the channels")
            c = x.chw()[0]
            each = -(-c // n)
            y = chunks(node, x, [min(each, c - i) for i in range(0, c, each)])
        elif fn == "split":
            x = act(first, node)
            sizes, dim = arg(node, 1, "split_size_or_sections"), arg(node, 2, "dim", 0) % len(x.shape)
            if dim != 1 or x.layout != "nchw":
                raise Unsupported(f"node {node.name}: split along dim {dim}: cnntime slices the channels")
            c = x.chw()[0]
            sizes = [min(sizes, c - i) for i in range(0, c, sizes)] if isinstance(sizes, int) else list(sizes)
            y = chunks(node, x, sizes)
        elif fn == "channel_shuffle":
            y = emit(node, "channelshuffle", [act(first, node)], groups=arg(node, 1, "groups"))
        elif fn == "layer_norm":
            y = layer_norm(node, act(first, node), arg(node, 1, "normalized_shape"))
        elif fn in ("contiguous", "clone", "to", "float", "detach", "softmax", "log_softmax"):
            y = first
        elif fn in ("size", "dim", "getattr") or not any(isinstance(a, Act) for a in args):
            y = None  # sizes and arithmetic on them: not tensors
        else:
            raise Unsupported(f"node {node.name} ({fn}) has no cnntime layer: replace it with one cnntime models (docs/models.md, \"Your own CNN\"); the ONNX route (--out FILE.onnx) maps more patterns")
        vals[node] = y
    raise Unsupported("the traced graph has no output")


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def main(argv=None):
    """Exports one model as the command line (or argv, its arguments) asks; a mistake
    ends it with SystemExit and the reason, as the command does."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("target", metavar="MODULE:NAME", help="the module and the class, function or instance in it")
    ap.add_argument("--input", type=int, default=224, help="input height and width in pixels (default 224)")
    ap.add_argument("--channels", type=int, default=3, help="input channels (default 3)")
    ap.add_argument("--out", required=True, help="FILE.onnx (ONNX, for `cnntime model import`) or FILE.json (a cnntime custom model file)")
    ap.add_argument("--name", help="the model's name in a .json file (default: NAME of MODULE:NAME); an .onnx file takes its name at import")
    ap.add_argument("--arg", action="append", default=[], metavar="KEY=VALUE", help="a keyword argument for the class or function (repeatable)")
    ap.add_argument("--weights", action="store_true", help="keep the weights in the ONNX file (cnntime does not need them)")
    ap.add_argument("--opset", type=int, default=17, help="ONNX opset (default 17)")
    a = ap.parse_args(argv)
    if a.input <= 0 or a.channels <= 0:
        fail("--input and --channels must be positive")
    out = a.out.lower()
    if not (out.endswith(".onnx") or out.endswith(".json")):
        fail(f"--out {a.out}: end it in .onnx or .json")
    try:
        import torch
    except ImportError:
        fail("PyTorch is not installed for this Python (Debian: apt install python3-torch; run /usr/bin/python3)")
    model, default_name = load(a.target, parse_args_kv(a.arg))
    if out.endswith(".onnx"):
        export_onnx(model, torch.randn(1, a.channels, a.input, a.input), a.out, a.weights, a.opset)
        print(f"wrote {a.out}; import it with: cnntime model import {a.out}", file=sys.stderr)
        return
    try:
        doc = to_cnntime(model, a.name or default_name, a.channels, a.input)
    except Unsupported as e:
        fail(str(e))
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {a.out} ({len(doc['layers'])} layers); check it with: cnntime model {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
