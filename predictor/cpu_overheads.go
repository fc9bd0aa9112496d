package predictor

// CPUOverheads is the step model of a measured CPU: its step is its layers' phases run
// one after another on the calling thread (synchronous, no launch cost), and nothing
// else, since each layer's SGD update is inside the timed phase that yields its
// parameters' gradients, and each phase's host cost inside its timing. So no update,
// per-tensor or per-step cost is added. That holds for both CPU frameworks:
//   - the Go CPU backend applies the update inside its timed weight-gradient kernel and
//     clears each output's gradient inside its timed forward pass (gpu/cpu's layerRun);
//   - scripts/pytorch_sweep.py --layers times each phase as PyTorch runs it from
//     Python (the module call, dispatcher and autograd recording in the forward, the
//     autograd node in the backward, less autograd.grad's own entry cost, which a step
//     pays once), and applies torch.optim.SGD's update of the layer's parameters inside
//     the phase that yields their gradients (bwd_weights; batch norm's one backward).
//
// What no layer holds is left out: once per step, zero_grad, the optimizer's and the
// backward pass's entry and the loss's Python, tens of microseconds on a CPU.
var CPUOverheads = func() Overheads {
	o := DefaultOverheads
	o.Synchronous = true
	o.LaunchForwardUS, o.LaunchBackwardUS, o.StepMS, o.UpdateIssueUSPerTensor = 0, 0, 0, 0
	o.UpdateBytesPerParam, o.AMPBytesPerParam, o.BF16BytesPerParam, o.SGDBytesPerParam = 0, 0, 0, 0
	o.SmallKernelUS, o.EagerOpUS = 0, 0
	o.MemoryEfficiency = 1
	o.FallbackBandwidthGBs = 12
	return o
}()
