package predictor

// CPUOverheads is the step model for the CPU backend: its step is its layers' phases
// run one after another on the calling thread (synchronous, no launch cost), and
// nothing else, since the backend applies each layer's SGD update inside its timed
// weight-gradient kernel and clears each output's gradient inside its timed forward
// pass (see gpu/cpu's layerRun). So no update, per-tensor or per-step cost is added.
var CPUOverheads = func() Overheads {
	o := DefaultOverheads
	o.Synchronous = true
	o.LaunchForwardUS, o.LaunchBackwardUS, o.StepMS, o.UpdateIssueUSPerTensor = 0, 0, 0, 0
	o.UpdateBytesPerParam, o.AMPBytesPerParam = 0, 0
	o.MemoryEfficiency = 1
	o.FallbackBandwidthGBs = 12
	return o
}()
