// Package devicelock keeps one sweep at a time on a device, whatever cache each writes
// to: two sweeps on one CPU or GPU spoil each other's timings. A sweep holds an
// exclusive lock (flock) on a file named by its device — the GPU's UUID, or "cpu" —
// in a folder of this user's on this machine, outside every cache ($XDG_RUNTIME_DIR/
// cnntime, else cnntime-UID in the system's temporary folder). The kernel drops the
// lock when the process dies, however it dies. The file says which process holds it
// and for which cache, so a sweep that has to wait can say for what.
//
// Imports: the standard library and predictor/measure.
package devicelock
