package gpu

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"cnntime/predictor/measure"
)

// QuarantineEnv names a file that replaces the default quarantine file.
const QuarantineEnv = "CNNTIME_GPU_QUARANTINE"

// Quarantined is a sweep item that crashed or hung the worker, or failed in it: later
// sweeps with the same worker build and cuDNN skip it and say so, instead of dying on
// it again. A new worker or cuDNN tries it again: the fault may have been theirs.
type Quarantined struct {
	DeviceKey string            `json:"device"`
	Worker    string            `json:"worker"` // the worker build's identity (WorkerBuild)
	CuDNN     string            `json:"cudnn"`  // the cuDNN version the worker loaded
	ConfigKey string            `json:"config"`
	Batch     int               `json:"batch"`
	Phase     measure.Phase     `json:"phase"`
	Precision measure.Precision `json:"precision"`
	Policy    measure.Policy    `json:"policy,omitempty"`
	CuDNNAPI  string            `json:"cudnn_api,omitempty"` // the API convolutions chose through ("" legacy)
	Reason    string            `json:"reason"`
	At        time.Time         `json:"at"`
}

func (q Quarantined) String() string {
	return fmt.Sprintf("%s at batch %d (%s, %s)", q.ConfigKey, q.Batch, q.Phase, q.Precision)
}

func (q Quarantined) same(o Quarantined) bool {
	return q.DeviceKey == o.DeviceKey && q.Worker == o.Worker && q.CuDNN == o.CuDNN && q.ConfigKey == o.ConfigKey &&
		q.Batch == o.Batch && q.Phase == o.Phase && q.Precision == o.Precision && q.Policy == o.Policy && q.CuDNNAPI == o.CuDNNAPI
}

// Quarantine is the file of quarantined items (JSON). Delete an entry, or the file, to
// try those items again.
type Quarantine struct {
	Path string
	mu   sync.Mutex
}

// DefaultQuarantine is $CNNTIME_GPU_QUARANTINE, else gpu-quarantine.json in the user's
// cache directory under cnntime.
func DefaultQuarantine() *Quarantine {
	if p := os.Getenv(QuarantineEnv); p != "" {
		return &Quarantine{Path: p}
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return &Quarantine{Path: filepath.Join(dir, "cnntime", "gpu-quarantine.json")}
}

// List returns the quarantined items (none when the file does not exist).
func (q *Quarantine) List() ([]Quarantined, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.load()
}

func (q *Quarantine) load() ([]Quarantined, error) {
	data, err := os.ReadFile(q.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the GPU quarantine: %w", err)
	}
	var out []Quarantined
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("the GPU quarantine %s is not valid JSON (%v): fix or delete it", q.Path, err)
	}
	return out, nil
}

// Add records an item (once).
func (q *Quarantine) Add(item Quarantined) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	list, err := q.load()
	if err != nil {
		return err
	}
	for _, o := range list {
		if o.same(item) {
			return nil
		}
	}
	list = append(list, item)
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(q.Path), 0o755); err != nil {
		return fmt.Errorf("record a quarantined GPU item: %w", err)
	}
	// A new file of its own (never one planted at a fixed name: a link there would be
	// written through), renamed over the list.
	tmp, err := os.CreateTemp(filepath.Dir(q.Path), "."+filepath.Base(q.Path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("record a quarantined GPU item: %w", err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), q.Path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record a quarantined GPU item: %w", err)
	}
	return nil
}

// quarantineKey is an item's quarantine identity in a job on a device, with a worker
// build and the cuDNN it loaded.
func quarantineKey(dev measure.Device, worker string, job Job, it Item) Quarantined {
	return Quarantined{DeviceKey: LayoutKey(dev.Key, job.Layout), Worker: worker, CuDNN: dev.CuDNN, ConfigKey: it.Config.Key(), Batch: it.Batch,
		Phase: it.Phase, Precision: it.KernelPrecision(job.Precision), Policy: job.Policy, CuDNNAPI: job.CuDNNAPI}
}

// WorkerBuild identifies the worker executable at path: the start of its contents'
// SHA-256, so that a rebuilt or updated worker is a new build; "" when it cannot be read.
func WorkerBuild(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
