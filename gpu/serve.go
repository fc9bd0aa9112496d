package gpu

import (
	"context"
	"errors"
	"fmt"
	"io"

	"cnntime/gpu/lifeline"
	"cnntime/gpu/protocol"
	"cnntime/gpu/selftest"
	"cnntime/predictor/measure"
)

// Worker is what a worker process serves: its devices, and a backend for one of them.
type Worker interface {
	Devices() ([]measure.Device, error)
	Open(index int) (Backend, error)
}

// SelfTester is implemented by workers that can run the self-test.
type SelfTester interface {
	SelfTest(ctx context.Context, index int) (selftest.Report, error)
}

// Serve answers one request read from in, writing protocol messages to out: the
// worker side of the protocol. A failure is reported to the app as an error message and
// returned, so the worker can exit non-zero.
func Serve(ctx context.Context, w Worker, in io.Reader, out io.Writer) error {
	send := protocol.NewWriter(out)
	fail := func(err error) error {
		if sendErr := send.Send(protocol.Message{Type: protocol.Error, Message: err.Error()}); sendErr != nil {
			return errors.Join(err, sendErr)
		}
		return err
	}
	req, err := protocol.NewReader(in).ReadRequest()
	if errors.Is(err, io.EOF) {
		return fail(fmt.Errorf("no request on stdin: cnntime-gpu is started by cnntime, which sends it a sweep as JSON"))
	}
	if err != nil {
		return fail(err)
	}
	switch req.Type {
	case protocol.ListDevices:
		devs, err := w.Devices()
		if err != nil {
			return fail(err)
		}
		for i := range devs {
			if err := send.Send(protocol.Message{Type: protocol.Device, Device: &devs[i]}); err != nil {
				return err
			}
		}
	case protocol.SelfTest:
		st, ok := w.(SelfTester)
		if !ok {
			return fail(fmt.Errorf("this worker has no self-test"))
		}
		rep, err := st.SelfTest(ctx, req.Device)
		if err != nil {
			return fail(err)
		}
		if err := send.Send(protocol.Message{Type: protocol.Report, Report: &rep}); err != nil {
			return err
		}
	case protocol.Sweep:
		b, err := w.Open(req.Device)
		if err != nil {
			return fail(err)
		}
		if req.CuDNNAPI != "" {
			s, ok := b.(APISetter)
			if !ok {
				return fail(fmt.Errorf("this worker's backend has no cuDNN API choice (asked for %s)", req.CuDNNAPI))
			}
			if err := s.SetCuDNNAPI(req.CuDNNAPI); err != nil {
				return fail(err)
			}
		}
		dev := b.Device()
		if err := send.Send(protocol.Message{Type: protocol.Device, Device: &dev}); err != nil {
			return err
		}
		job := Job{Precision: req.Precision, Policy: req.Policy, Repeats: req.Repeats, Items: make([]Item, len(req.Items)), CuDNNAPI: req.CuDNNAPI, Layout: req.Layout, L2: req.L2}
		for i, it := range req.Items {
			job.Items[i] = Item{Config: it.Config, Batch: it.Batch, Phase: it.Phase, Precision: it.Precision}
		}
		done := 0
		sink := Sink{
			Measured: func(m measure.Measurement) error {
				if err := lifeline.Check(); err != nil { // no one reads it any more
					return err
				}
				done++
				if err := send.Send(protocol.Message{Type: protocol.Measurement, Measurement: &m}); err != nil {
					return err
				}
				return send.Send(protocol.Message{Type: protocol.Progress, Done: done, Total: len(job.Items)})
			},
			Warning: func(s string) { _ = send.Send(protocol.Message{Type: protocol.Warning, Message: s}) },
			Starting: func(i int) error {
				if err := lifeline.Check(); err != nil { // the app that asked for it died
					return err
				}
				return send.Send(protocol.Message{Type: protocol.Start, Done: i, Total: len(job.Items)})
			},
			Failed: func(f Failure) error {
				done++
				return send.Send(protocol.Message{Type: protocol.Failed, Done: f.Index, Total: len(job.Items), Message: f.Reason, Sticky: f.Sticky, Install: f.Install})
			},
		}
		if err := Execute(ctx, b, job, sink); err != nil {
			if ctx.Err() != nil {
				return fail(fmt.Errorf("sweep stopped after %d of %d measurements: %w", done, len(job.Items), err))
			}
			return fail(err)
		}
	}
	return send.Send(protocol.Message{Type: protocol.Done})
}
