// Package convalgo makes the worker's cuDNN convolution decisions without calling cuDNN:
// the math type a convolution descriptor starts with for each precision, which of the
// algorithms cuDNN ranked (cudnnGet*Algorithm_v7 or cudnnFind*AlgorithmEx) to run, with
// the math type that algorithm was ranked under (set on the descriptor before running, as
// PyTorch does), and the workspace to give cudnnFind*AlgorithmEx; and for the v8 graph API
// PyTorch 2 uses (V8), which of the engine heuristics' configurations PyTorch's filter
// keeps and runs, and the label that records the API, the engine and its knobs. Tested
// without a GPU.
//
// Imports: predictor/cnn and predictor/measure only; no CUDA.
package convalgo
