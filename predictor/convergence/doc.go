// Package convergence is cnntime's statistical-efficiency model: how many epochs a
// training run needs to reach a target accuracy at a given global batch size. It
// follows McCandlish et al. 2018 ("An Empirical Model of Large-Batch Training"): the
// epochs to a target grow with the batch as E(B) = E_min·(1 + B/B_noise), where E_min is
// what a small batch needs and B_noise, the gradient noise scale, is the critical batch
// beyond which every doubling of the batch costs nearly twice the epochs. Presets carry
// E_min and B_noise fitted to published epochs-to-target figures, the batch ranges in
// which the optimizer regime they assume is known to hold (SGD with linear learning-rate
// scaling and warm-up, LARS), and an expected error; a custom model takes a user's own
// epochs at a reference batch and a critical batch (or a preset's). It also reads the
// published figures and fits them (Fit), for `cnntime validate` and `cnntime calibrate`.
//
// Imports: predictor/published (reading the figures file). It does no I/O: the figures
// arrive as bytes.
package convergence
