package protocol

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"cnntime/gpu/selftest"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Request types.
const (
	ListDevices = "devices"
	Sweep       = "sweep"
	SelfTest    = "selftest"
)

// Message types.
const (
	Device      = "device"
	Start       = "start"
	Report      = "report"
	Progress    = "progress"
	Measurement = "measurement"
	Failed      = "failed" // an item's measurement returned an error: Done is its index, Message why
	Warning     = "warning"
	Error       = "error"
	Done        = "done"
)

// Item is one measurement to take.
type Item struct {
	Config cnn.Config    `json:"config"`
	Batch  int           `json:"batch"`
	Phase  measure.Phase `json:"phase"`
	// Precision is the item's kernel precision; "" is the request's.
	Precision measure.Precision `json:"precision,omitempty"`
}

// Request is the app's one line to the worker.
type Request struct {
	Type      string            `json:"type"`
	Device    int               `json:"device,omitempty"`
	Precision measure.Precision `json:"precision,omitempty"`
	Policy    measure.Policy    `json:"policy,omitempty"`
	// CuDNNAPI is the cuDNN API convolutions choose their algorithm through: "" or
	// legacy, or v8 (package gpu/convalgo).
	CuDNNAPI string `json:"cudnn_api,omitempty"`
	// Layout is the activations' layout: "" or nchw, or nhwc (channels_last).
	Layout string `json:"layout,omitempty"`
	// L2 is how a phase that fits in the L2 is timed: "" or cold, or producer-hot.
	L2      string `json:"l2,omitempty"`
	Repeats int    `json:"repeats,omitempty"`
	Items   []Item `json:"items,omitempty"`
}

// Validate reports the first thing wrong with a request, or nil.
func (r Request) Validate() error {
	switch r.Type {
	case ListDevices:
		return nil
	case Sweep, SelfTest:
	default:
		return fmt.Errorf("unknown request type %q: want %q, %q or %q", r.Type, ListDevices, Sweep, SelfTest)
	}
	if r.Device < 0 {
		return fmt.Errorf("device index %d is negative", r.Device)
	}
	if r.Type == SelfTest {
		return nil
	}
	if _, err := measure.ParsePrecision(string(r.Precision)); err != nil {
		return err
	}
	if r.Policy != measure.NoPolicy {
		if _, err := measure.ParsePolicy(string(r.Policy)); err != nil {
			return err
		}
	}
	if r.CuDNNAPI != "" && r.CuDNNAPI != "legacy" && r.CuDNNAPI != "v8" {
		return fmt.Errorf("unknown cuDNN API %q: want legacy or v8", r.CuDNNAPI)
	}
	switch r.Layout {
	case "", "nchw", "nhwc":
	default:
		return fmt.Errorf("unknown memory layout %q: want nchw or nhwc", r.Layout)
	}
	switch r.L2 {
	case "", "cold", "producer-hot":
	default:
		return fmt.Errorf("unknown L2 mode %q: want cold or producer-hot", r.L2)
	}
	if r.Repeats < 1 {
		return fmt.Errorf("repeats is %d: must be at least 1", r.Repeats)
	}
	for i, it := range r.Items {
		if it.Batch < 1 {
			return fmt.Errorf("item %d has batch size %d: must be positive", i, it.Batch)
		}
		switch it.Phase {
		case measure.Forward, measure.BackwardData, measure.BackwardWeights:
		default:
			return fmt.Errorf("item %d has unknown phase %q", i, it.Phase)
		}
		if it.Precision != "" {
			if _, err := measure.ParsePrecision(string(it.Precision)); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
	}
	return nil
}

// Message is one line from the worker.
type Message struct {
	Type        string               `json:"type"`
	Device      *measure.Device      `json:"device,omitempty"`
	Measurement *measure.Measurement `json:"measurement,omitempty"`
	Done        int                  `json:"done,omitempty"`
	Total       int                  `json:"total,omitempty"`
	Message     string               `json:"message,omitempty"`
	Sticky      bool                 `json:"sticky,omitempty"`  // failed: the GPU's context is broken; the worker exits next
	Install     bool                 `json:"install,omitempty"` // failed: the libraries as installed, not the item (not quarantined)
	Report      *selftest.Report     `json:"report,omitempty"`
}

// Validate reports the first thing wrong with a message, or nil.
func (m Message) Validate() error {
	switch m.Type {
	case Device:
		if m.Device == nil || m.Device.Key == "" {
			return fmt.Errorf("device message without a device key")
		}
	case Measurement:
		if m.Measurement == nil {
			return fmt.Errorf("measurement message without a measurement")
		}
		return m.Measurement.Validate()
	case Report:
		if m.Report == nil {
			return fmt.Errorf("report message without a report")
		}
	case Start:
		if m.Done < 0 || m.Done >= m.Total {
			return fmt.Errorf("start of item %d of %d", m.Done, m.Total)
		}
	case Failed:
		if m.Done < 0 || m.Done >= m.Total {
			return fmt.Errorf("failure of item %d of %d", m.Done, m.Total)
		}
		if m.Message == "" {
			return fmt.Errorf("failure of item %d without a reason", m.Done)
		}
	case Progress, Warning, Done:
	case Error:
		if m.Message == "" {
			return fmt.Errorf("error message without text")
		}
	default:
		return fmt.Errorf("unknown message type %q", m.Type)
	}
	return nil
}

// Writer writes messages or requests as JSON lines; it is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewWriter writes lines to w.
func NewWriter(w io.Writer) *Writer { return &Writer{enc: json.NewEncoder(w)} }

// Send writes v as one line.
func (w *Writer) Send(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.enc.Encode(v); err != nil {
		return fmt.Errorf("write protocol line: %w", err)
	}
	return nil
}

// maxLine bounds one line: a sweep request of thousands of items is a few MB.
const maxLine = 64 << 20

// Reader reads JSON lines.
type Reader struct {
	sc   *bufio.Scanner
	line int
}

// NewReader reads lines from r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &Reader{sc: sc}
}

// LineError is a line that is not a valid protocol message (a library that printed on
// the protocol's descriptor, say): the next line may be fine. Any other error from
// the reader means the stream is unusable and the caller must stop reading.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return e.Err.Error() }
func (e *LineError) Unwrap() error { return e.Err }

// ReadRequest reads and validates the next request. io.EOF means no more lines.
func (r *Reader) ReadRequest() (Request, error) {
	var req Request
	if err := r.next(&req); err != nil {
		return req, err
	}
	if err := req.Validate(); err != nil {
		return req, &LineError{r.line, fmt.Errorf("request on line %d: %w", r.line, err)}
	}
	return req, nil
}

// ReadMessage reads and validates the next message. io.EOF means no more lines; a
// *LineError a bad line (read on); any other error a broken stream (stop).
func (r *Reader) ReadMessage() (Message, error) {
	var m Message
	if err := r.next(&m); err != nil {
		return m, err
	}
	if err := m.Validate(); err != nil {
		return m, &LineError{r.line, fmt.Errorf("worker message on line %d: %w", r.line, err)}
	}
	return m, nil
}

func (r *Reader) next(v any) error {
	if !r.sc.Scan() {
		if err := r.sc.Err(); err != nil {
			return fmt.Errorf("read protocol line %d: %w", r.line+1, err)
		}
		return io.EOF
	}
	r.line++
	if err := json.Unmarshal(r.sc.Bytes(), v); err != nil {
		return &LineError{r.line, fmt.Errorf("protocol line %d is not valid JSON: %w", r.line, err)}
	}
	return nil
}
