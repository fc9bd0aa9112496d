// Package protocol is the JSON-lines conversation between cnntime and its sweep worker
// (cnntime-gpu): one request line from the app on the worker's stdin, then message
// lines from the worker on its stdout until "done" or "error". Each line is one JSON
// object with a "type".
//
// App → worker:
//
//	{"type":"devices"}                                  list the devices
//	{"type":"selftest","device":0}                      run the self-test (cnntime-gpu -selftest)
//	{"type":"sweep","device":0,"precision":"fp32","policy":"heuristic","repeats":5,
//	 "items":[{"config":{...},"batch":32,"phase":"fwd"}, ...]}
//
// Worker → app:
//
//	{"type":"device","device":{...}}                    a device (one per device for "devices";
//	                                                    the swept device first for "sweep")
//	{"type":"start","done":3,"total":120}               before each item: item 3 (0-based) is in flight
//	{"type":"progress","done":3,"total":120}            after each item
//	{"type":"report","report":{...}}                    the self-test's report
//	{"type":"measurement","measurement":{...}}          one result, as soon as it is taken
//	{"type":"warning","message":"..."}                  e.g. the GPU's clock dropped (throttling)
//	{"type":"error","message":"..."}                    the worker cannot go on; it exits non-zero
//	{"type":"done"}                                     the request is complete
//
// Imports: gpu/selftest, predictor/cnn and predictor/measure, the records its messages
// carry; it runs nothing.
package protocol
