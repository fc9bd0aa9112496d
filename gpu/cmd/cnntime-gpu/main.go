//go:build cuda

// Command cnntime-gpu is cnntime's CUDA sweep worker. cnntime starts it and speaks the
// JSON-lines protocol of cnntime/gpu/protocol over its stdin and stdout: a sweep in,
// device facts, progress and measurements out. Run by hand, "cnntime-gpu -list" prints
// the CUDA devices and "cnntime-gpu -selftest" checks every layer kind against the CPU
// reference (exit 0 when the measurements can be trusted, 1 when not). With no usable
// GPU it exits with status 3 and one sentence.
//
// Build it with "make gpu-worker" (go build -tags cuda); it needs cuda.h and libcuda to
// build, and loads cuDNN, cuBLAS and NVRTC at run time.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"cnntime/gpu"
	"cnntime/gpu/cuda"
	_ "cnntime/gpu/cuda/precheck" // initialises before gorgonia.org/cu: a clear sentence when there is no GPU
	"cnntime/gpu/protofd"
)

func main() {
	// CUDA contexts are per OS thread: every CUDA call runs on this one.
	runtime.LockOSThread()
	var opt cuda.Options
	flag.StringVar(&opt.CuDNN, "cudnn", "", "path of the cuDNN library (default $CNNTIME_CUDNN, else libcudnn.so.9 or .8)")
	flag.StringVar(&opt.CuBLAS, "cublas", "", "path of the cuBLAS library (default $CNNTIME_CUBLAS, else libcublas.so.13, .12 or .11)")
	flag.StringVar(&opt.NVRTC, "nvrtc", "", "path of the NVRTC library, optional (default $CNNTIME_NVRTC, else libnvrtc.so.13, .12 or .11.2)")
	list := flag.Bool("list", false, "print the CUDA devices and exit")
	self := flag.Bool("selftest", false, "check every layer kind in fp32, tf32 and amp against the CPU reference, time a short sweep, print the table and exit")
	device := flag.Int("device", 0, "the CUDA device -selftest checks")
	asJSON := flag.Bool("json", false, "print -selftest's report as JSON")
	flag.Parse()
	// The precheck moved the protocol (and a person's output) off fd 1: what libraries
	// print on stdout goes to stderr.
	out := protofd.Out()
	w := cuda.Worker{Options: opt}
	if *self {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		rep, err := w.SelfTest(ctx, *device)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "cnntime-gpu:", err)
			os.Exit(1)
		}
		if *asJSON {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			err = enc.Encode(rep)
		} else {
			err = rep.Write(out)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cnntime-gpu:", err)
			os.Exit(1)
		}
		if !rep.Trustworthy() {
			os.Exit(1)
		}
		return
	}
	if *list {
		devs, err := w.Devices()
		if err != nil {
			fmt.Fprintln(os.Stderr, "cnntime-gpu:", err)
			os.Exit(1)
		}
		for i, d := range devs {
			fmt.Fprintf(out, "cuda:%d  %s  %s  %d SMs  %.1f GiB  CUDA %s  cuDNN %s  driver %s\n", i, d.Name, d.UUID, d.SMs, float64(d.MemoryBytes)/(1<<30), d.CUDA, d.CuDNN, d.Driver)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := gpu.Serve(ctx, w, os.Stdin, out)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cnntime-gpu:", err)
		os.Exit(1)
	}
}
