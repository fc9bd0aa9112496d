package assets

import _ "embed"

// PublicMeasurements is a copy of the published whole-network training speeds used
// for development (validation/public_measurements_dev.csv, from ../shared/data): one
// row per source × GPU × model × framework × precision × batch size, with notes that
// give the exact source file and its caveats. `cnntime validate` compares the
// predictor with the rows whose setup it models.
//
//go:embed validation/public_measurements_dev.csv
var PublicMeasurements []byte

// ModernAnchors is the published whole-network training throughputs of current GPUs
// (V100 to H100; PyTorch and TensorFlow; fp32/TF32 and amp) that the whole-step
// calibration is tuned and checked on (validation/modern_anchors.csv): one row per
// source × GPU × CNN × precision × batch, with where the figure is published, its
// setup and whether it is in the tuning or the held-out part.
//
//go:embed validation/modern_anchors.csv
var ModernAnchors []byte

// Scaling is the published data-parallel scaling of CNN training within a node and
// over several (validation/scaling.csv): one row per run (source × GPUs × nodes ×
// precision), with the scaling efficiency from a baseline GPU count, the GPUs, their
// link and the network, and whether the row's source tunes the model or is held out.
//
//go:embed validation/scaling.csv
var Scaling []byte

// MLPerfCeiling is NVIDIA's published MLPerf Training per-GPU ResNet-50 throughput
// (validation/mlperf_ceiling.csv), a conservative lower bound of it: a heavily
// optimised ceiling that no prediction of a PyTorch step may exceed.
//
//go:embed validation/mlperf_ceiling.csv
var MLPerfCeiling []byte

// LoaderRuns is published training runs and loader benchmarks that read real images
// through an input pipeline (a PyTorch DataLoader, DALI on the CPU or the GPU, FFCV,
// tf.data), each with its CPU, vCPUs and workers (validation/loader_runs.csv): the
// DataLoader table of `cnntime validate`.
//
//go:embed validation/loader_runs.csv
var LoaderRuns []byte

// Convergence is the published epochs-to-target figures at several global batch sizes
// (validation/convergence.csv): MLPerf's ResNet-50 reference convergence points on
// ImageNet, DAWNBench and Pollux runs on CIFAR-10, one row per source × batch, with
// where each is published and whether it tunes the epochs model or is held out.
//
//go:embed validation/convergence.csv
var Convergence []byte

// StepBatch is published one-GPU training steps of real scripts on real data at
// several batch sizes (validation/step_batch.csv): each source × GPU × model's line
// step time = intercept + slope × batch, the small-batch table of `cnntime validate`.
//
//go:embed validation/step_batch.csv
var StepBatch []byte

// ResNet18CIFAR is kuangliu/pytorch-cifar's ResNet-18 for 32×32 images
// (validation/resnet18_cifar.json, a custom model file), which several published
// CIFAR-10 runs of step_batch.csv train.
//
//go:embed validation/resnet18_cifar.json
var ResNet18CIFAR []byte

// Recipes is cnntime's built-in training recipes (recipes/recipes.yaml): torchvision's
// documented recipes for its zoo, MLPerf's ResNet-50 LARS, FFCV's ResNet-50 and
// ResNet-18 configurations and the DAWNBench CIFAR-10 runs, each with its published
// epochs, batch and accuracy and the law its epochs follow with the batch
// (predictor/recipe reads them).
//
//go:embed recipes/recipes.yaml
var Recipes []byte
