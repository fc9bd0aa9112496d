// Package recipe is what decides how many epochs a training run takes: a training
// recipe (optimizer, learning rate and its scaling rule, schedule and warm-up, weight
// decay, label smoothing, mixup and cutmix, augmentation, EMA, train and validation
// resolution), the epochs and global batch it was published with, the accuracy it
// reached there, and the law its epochs follow when the batch changes, with the batches
// that law was shown on. The built-in recipes are torchvision's documented ones for its
// zoo, MLPerf's ResNet-50 LARS, FFCV's ResNet-50 and ResNet-18 configurations and the
// DAWNBench CIFAR-10 runs (assets/recipes/recipes.yaml, cited per recipe); a user's own
// recipe file (YAML or JSON) is read the same way.
//
// A Plan is a recipe resolved for one network, one dataset and one target accuracy: it
// gives the epochs at every global batch with a ± band, and says where the batch (or
// the network, or the target) lies outside the recipe's evidence, where the epochs are
// extrapolated and the band widens (see Plan.At and ForTarget).
//
// Imports: predictor/convergence (the fitted epochs-vs-batch laws), nothing else of
// ours. It does no I/O: recipe files arrive as bytes.
package recipe
