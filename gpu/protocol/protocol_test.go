package protocol

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

func TestRoundTrip(t *testing.T) {
	conv := cnn.Config{Op: cnn.OpConv2d, In: cnn.Shape{C: 3, H: 32, W: 32}, Out: cnn.Shape{C: 8, H: 16, W: 16}, NumInputs: 1,
		Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{2, 2}, Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1}
	req := Request{Type: Sweep, Device: 1, Precision: measure.AMP, Policy: measure.Fastest, Repeats: 5,
		Items: []Item{{Config: conv, Batch: 64, Phase: measure.BackwardWeights}}}
	dev := measure.Device{Key: "cuda:GPU-1", Backend: "cuda", Name: "Test GPU", SMs: 80}
	m := measure.Measurement{DeviceKey: dev.Key, ConfigKey: conv.Key(), Batch: 64, Precision: measure.AMP,
		Phase: measure.BackwardWeights, Policy: measure.Fastest, Algorithm: "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1",
		MedianMS: 0.25, SpreadMS: 0.01, Repeats: 5, WorkspaceBytes: 1 << 20, Status: measure.OK,
		At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	msgs := []Message{
		{Type: Device, Device: &dev},
		{Type: Measurement, Measurement: &m},
		{Type: Progress, Done: 1, Total: 1},
		{Type: Warning, Message: "SM clock fell from 1980 to 1410 MHz"},
		{Type: Done},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Send(req); err != nil {
		t.Fatal(err)
	}
	for _, msg := range msgs {
		if err := w.Send(msg); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != 1+len(msgs) {
		t.Fatalf("wrote %d lines, want %d", n, 1+len(msgs))
	}
	r := NewReader(&buf)
	gotReq, err := r.ReadRequest()
	if err != nil || !reflect.DeepEqual(gotReq, req) {
		t.Fatalf("request = %+v, %v; want %+v", gotReq, err, req)
	}
	if gotReq.Items[0].Config.Key() != conv.Key() {
		t.Errorf("config key changed in transit: %s", gotReq.Items[0].Config.Key())
	}
	for i, want := range msgs {
		got, err := r.ReadMessage()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("message %d = %+v, %v; want %+v", i, got, err, want)
		}
	}
	if _, err := r.ReadMessage(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last line: %v, want EOF", err)
	}
}

func TestValidate(t *testing.T) {
	good := Request{Type: Sweep, Precision: measure.FP32, Repeats: 1, Items: []Item{{Batch: 1, Phase: measure.Forward}}}
	reqs := []struct {
		name    string
		edit    func(*Request)
		wantErr string
	}{
		{"good", func(*Request) {}, ""},
		{"devices needs nothing", func(r *Request) { *r = Request{Type: ListDevices} }, ""},
		{"no policy is the CPU's", func(r *Request) { r.Policy = measure.NoPolicy }, ""},
		{"unknown type", func(r *Request) { r.Type = "run" }, "unknown request type"},
		{"negative device", func(r *Request) { r.Device = -1 }, "negative"},
		{"bad policy", func(r *Request) { r.Policy = "lucky" }, "unknown algorithm policy"},
		{"zero batch", func(r *Request) { r.Items[0].Batch = 0 }, "batch size 0"},
		{"bad phase", func(r *Request) { r.Items[0].Phase = "sideways" }, "unknown phase"},
		{"bf16 channels_last", func(r *Request) { r.Precision, r.Layout = measure.BF16, "nhwc" }, ""},
		{"an item in tf32", func(r *Request) { r.Items[0].Precision = measure.TF32 }, ""},
		{"an item in fp8", func(r *Request) { r.Items[0].Precision = "fp8" }, `item 0: unknown precision "fp8"`},
		{"bad layout", func(r *Request) { r.Layout = "chwn" }, "unknown memory layout"},
	}
	for _, tc := range reqs {
		r := good
		r.Items = append([]Item(nil), good.Items...)
		tc.edit(&r)
		err := r.Validate()
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.wantErr)
		}
	}
	msgs := []struct {
		msg     Message
		wantErr string
	}{
		{Message{Type: Done}, ""},
		{Message{Type: Device}, "without a device key"},
		{Message{Type: Measurement}, "without a measurement"},
		{Message{Type: Measurement, Measurement: &measure.Measurement{DeviceKey: "d", ConfigKey: "c", Batch: 1, Phase: measure.Forward, Status: measure.OK}}, "must be positive"},
		{Message{Type: Error}, "without text"},
		{Message{Type: "hello"}, "unknown message type"},
	}
	for _, tc := range msgs {
		err := tc.msg.Validate()
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%+v: Validate = %v, want %q", tc.msg, err, tc.wantErr)
		}
	}
}

func TestReaderTellsBadLinesFromBrokenStreams(t *testing.T) {
	in := "garbage from a library\n{\"type\":\"done\"}\n" + strings.Repeat("x", maxLine+10)
	r := NewReader(strings.NewReader(in))
	_, err := r.ReadMessage()
	var le *LineError
	if !errors.As(err, &le) || le.Line != 1 {
		t.Fatalf("a non-JSON line: got %v, want a LineError for line 1", err)
	}
	if m, err := r.ReadMessage(); err != nil || m.Type != Done {
		t.Fatalf("the line after garbage: got %+v, %v", m, err)
	}
	_, err = r.ReadMessage()
	if err == nil || errors.As(err, &le) || errors.Is(err, io.EOF) {
		t.Fatalf("an over-long line must be a stream error (stop reading), got %v", err)
	}
}

func TestSelfTestRequestAndReport(t *testing.T) {
	if err := (Request{Type: SelfTest}).Validate(); err != nil {
		t.Errorf("self-test request: %v", err)
	}
	if err := (Message{Type: Report}).Validate(); err == nil {
		t.Error("a report message without a report validated")
	}
	if err := (Message{Type: Start, Done: 3, Total: 3}).Validate(); err == nil {
		t.Error("start of item 3 of 3 validated")
	}
}

// TestFailedMessage: a failed item names its index among the request's items and why.
func TestFailedMessage(t *testing.T) {
	for _, c := range []struct {
		m  Message
		ok bool
	}{
		{Message{Type: Failed, Done: 1, Total: 3, Message: "cuDNN: CUDNN_STATUS_EXECUTION_FAILED (5000)", Sticky: true}, true},
		{Message{Type: Failed, Done: 3, Total: 3, Message: "x"}, false},
		{Message{Type: Failed, Done: 0, Total: 3}, false},
	} {
		if err := c.m.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: Validate = %v, want ok %v", c.m, err, c.ok)
		}
	}
}
