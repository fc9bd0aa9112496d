package app

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"cnntime/db"
	"cnntime/gpu"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// How the local GPUs were found.
const (
	DetectedByWorker     = gpu.WorkerName // the CUDA worker's device list
	DetectedByNvidiaSMI  = "nvidia-smi"
	DetectedByNothing    = "none" // neither tool is present: the user picks the GPU by hand
	nvidiaSMIName        = "nvidia-smi"
	detectTimeout        = 20 * time.Second
	workstationName      = "My workstation"
	gibibyte             = 1 << 30
	mebibytesPerGibibyte = 1024
)

// LocalGPU is one GPU found on this computer.
type LocalGPU struct {
	Name      string  `json:"name"`       // as the driver reports it
	MemoryGiB float64 `json:"memory_gib"` // 0 if not reported
	UUID      string  `json:"uuid,omitempty"`
	GPUID     string  `json:"gpu"` // the catalog GPU it is; "" when none matches
}

// Detection is what DetectGPUs found and how.
type Detection struct {
	Method string     `json:"method"` // DetectedByWorker, DetectedByNvidiaSMI or DetectedByNothing
	GPUs   []LocalGPU `json:"gpus"`
	Host   LocalHost  `json:"host"` // this computer's CPU, threads and memory
}

// detector finds and asks the CUDA worker and nvidia-smi; tests replace its functions.
type detector struct {
	findWorker  func() (string, error)
	listDevices func(ctx context.Context, workerPath string) ([]measure.Device, error)
	look        func(name string) (string, error)
	run         func(ctx context.Context, path string, args ...string) ([]byte, error)
	host        func() LocalHost
}

var localDetector = detector{findWorker: gpu.FindWorker, listDevices: listWorkerDevices, look: findTool, run: runTool, host: detectLocalHost}

// DetectGPUs lists this computer's GPUs: through the CUDA worker when it is installed
// (see gpu.FindWorker), else through nvidia-smi, else none. Each GPU is mapped to a
// catalog GPU id where one matches its name and memory.
func DetectGPUs(ctx context.Context) (Detection, error) {
	c, err := LoadCatalog()
	if err != nil {
		return Detection{}, err
	}
	return localDetector.detect(ctx, c)
}

func (d detector) detect(ctx context.Context, c *hw.Catalog) (Detection, error) {
	det := Detection{Method: DetectedByNothing}
	if d.host != nil {
		det.Host = d.host()
	}
	var workerErr error
	if path, err := d.findWorker(); err == nil {
		devices, err := d.listDevices(ctx, path)
		if err == nil {
			det.GPUs, det.Method = workerGPUs(devices, c), DetectedByWorker
		} else {
			workerErr = fmt.Errorf("ask %s for its devices: %w", path, err)
		}
	}
	if det.Method == DetectedByNothing {
		if path, err := d.look(nvidiaSMIName); err == nil {
			out, err := d.run(ctx, path, "--query-gpu=name,memory.total,uuid", "--format=csv,noheader,nounits")
			if err == nil {
				det.GPUs, err = parseNvidiaSMI(out)
			}
			if err != nil {
				return det, errors.Join(workerErr, fmt.Errorf("%s: %w (no GPU could be listed; without a working NVIDIA driver add the machine by hand: cnntime machine add --name workstation --gpu ID --price USD)", path, err))
			}
			det.Method = DetectedByNvidiaSMI
		} else if workerErr != nil {
			return det, workerErr
		}
	}
	for i, g := range det.GPUs {
		if g.GPUID == "" {
			det.GPUs[i].GPUID, _ = c.MatchGPUName(g.Name, g.MemoryGiB)
		}
	}
	return det, nil
}

func listWorkerDevices(ctx context.Context, path string) ([]measure.Device, error) {
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	return gpu.ListDevices(ctx, path)
}

// workerGPUs turns the worker's CUDA devices into local GPUs, keeping the catalog id
// the worker gives when the catalog has it.
func workerGPUs(devices []measure.Device, c *hw.Catalog) []LocalGPU {
	var gpus []LocalGPU
	for _, dev := range devices {
		if dev.Backend != "" && dev.Backend != "cuda" {
			continue
		}
		g := LocalGPU{Name: dev.Name, UUID: dev.UUID, MemoryGiB: float64(dev.MemoryBytes) / gibibyte}
		if known, err := c.GPU(dev.GPUID); dev.GPUID != "" && err == nil {
			g.GPUID = known.ID
		}
		gpus = append(gpus, g)
	}
	return gpus
}

// parseNvidiaSMI reads `nvidia-smi --query-gpu=name,memory.total,uuid
// --format=csv,noheader,nounits`: one line per GPU, memory in MiB. It also accepts
// memory with its unit ("16160 MiB").
func parseNvidiaSMI(out []byte) ([]LocalGPU, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = 3
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read its GPU list (want name, memory.total, uuid per line): %w", err)
	}
	var gpus []LocalGPU
	for _, rec := range recs {
		mem := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rec[1]), "MiB"))
		mib, err := strconv.ParseFloat(mem, 64)
		if err != nil {
			mib = 0 // "[N/A]" on some boards: memory unknown
		}
		gpus = append(gpus, LocalGPU{Name: strings.TrimSpace(rec[0]), MemoryGiB: mib / mebibytesPerGibibyte, UUID: strings.TrimSpace(rec[2])})
	}
	return gpus, nil
}

// findTool looks for a program on PATH.
func findTool(name string) (string, error) { return exec.LookPath(name) }

func runTool(ctx context.Context, path string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(string(out)) // nvidia-smi explains its failures on stdout
		}
		if msg != "" {
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	return out, nil
}

// Workstation builds the "My workstation" machine from a detection: the catalog GPU
// found most often and how many of it there are, with the host's CPU, threads and
// memory as detected, keeping the price (and whatever of the host the detection did
// not find) of the previous workstation when there was one. Other GPUs, and GPUs no
// catalog entry matches, are named in the notes.
func Workstation(det Detection, previous *hw.Machine) (hw.Machine, error) {
	counts := map[string]int{}
	best := ""
	var unmatched []string
	for _, g := range det.GPUs {
		if g.GPUID == "" {
			unmatched = append(unmatched, g.Name)
			continue
		}
		counts[g.GPUID]++
		if counts[g.GPUID] > counts[best] || (counts[g.GPUID] == counts[best] && g.GPUID < best) {
			best = g.GPUID
		}
	}
	if best == "" {
		if len(unmatched) > 0 {
			return hw.Machine{}, fmt.Errorf("found %s through %s, but no catalog GPU matches; add the machine by hand with 'cnntime machine add --name workstation --gpu ID --price USD' choosing the closest GPU from 'cnntime machines'",
				strings.Join(unmatched, ", "), det.Method)
		}
		return hw.Machine{}, fmt.Errorf("no NVIDIA GPU found (neither %s nor %s is installed, or they list none); add the machine by hand with 'cnntime machine add --name workstation --gpu ID --price USD'", gpu.WorkerName, nvidiaSMIName)
	}
	m := hw.Machine{
		ID: hw.WorkstationID, Provider: hw.UserProvider, Instance: workstationName, GPUID: best, GPUCount: counts[best],
		PriceSource: "not set: set it with 'cnntime machine set-price " + hw.WorkstationID + " USD' (e.g. electricity price × power)",
		User:        true, Listing: hw.ListingUser,
	}
	if previous != nil {
		m.PriceUSDPerHour, m.PriceSource = previous.PriceUSDPerHour, previous.PriceSource
		m.VCPUs, m.MemoryGiB, m.Region, m.CPU = previous.VCPUs, previous.MemoryGiB, previous.Region, previous.CPU
	}
	// What this detection found of the host replaces what an earlier one kept.
	if h := det.Host; h.VCPUs > 0 {
		m.VCPUs = h.VCPUs
	}
	if h := det.Host; h.MemoryGiB > 0 {
		m.MemoryGiB = h.MemoryGiB
	}
	if h := det.Host; h.CPUModel != "" && hw.CheckName(h.CPUModel) == nil {
		m.CPU = hw.UserCPU(h.CPUModel, 0)
	}
	var others []string
	for _, g := range det.GPUs {
		if g.GPUID != best {
			others = append(others, g.Name)
		}
	}
	m.Notes = fmt.Sprintf("GPUs detected by %s", det.Method)
	if len(others) > 0 {
		m.Notes += "; also present, not counted: " + strings.Join(others, ", ")
	}
	return m, nil
}

// DetectWorkstation detects the local GPUs and adds or updates the user/workstation
// machine in the cache, keeping a price the user set before.
func DetectWorkstation(ctx context.Context, d *db.DB) (hw.Machine, Detection, error) {
	det, err := DetectGPUs(ctx)
	if err != nil {
		return hw.Machine{}, det, err
	}
	return SaveWorkstation(ctx, d, det)
}

func SaveWorkstation(ctx context.Context, d *db.DB, det Detection) (hw.Machine, Detection, error) {
	prev, found, err := userMachine(ctx, d, hw.WorkstationID)
	if err != nil {
		return hw.Machine{}, det, err
	}
	var previous *hw.Machine
	if found {
		previous = &prev
	}
	m, err := Workstation(det, previous)
	if err != nil {
		return hw.Machine{}, det, err
	}
	c, err := LoadCatalog()
	if err != nil {
		return hw.Machine{}, det, err
	}
	if err := c.CheckUserMachine(m); err != nil {
		return hw.Machine{}, det, err
	}
	if err := d.PutUserMachine(ctx, m); err != nil {
		return hw.Machine{}, det, err
	}
	return m, det, nil
}
