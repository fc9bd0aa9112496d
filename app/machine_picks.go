package app

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"cnntime/predictor/hw"
)

// The machine list as people look for machines: their own first, then the providers
// in a fixed order, each with its newest GPUs first; a filter for the listings most
// people no longer want; and quick picks.

// providerOrder is the order providers are listed in; others follow alphabetically.
var providerOrder = []string{"aws", "gcp", "azure", "lambda", "runpod", "coreweave"}

// ProviderRank orders provider groups: the user's own machines first, then AWS, GCP,
// Azure, Lambda, RunPod, CoreWeave, then any other.
func ProviderRank(provider string) int {
	if i := slices.Index(providerOrder, strings.ToLower(provider)); i >= 0 {
		return i + 1
	}
	return len(providerOrder) + 1
}

// ccValue reads a compute capability "8.6" as 86; 0 when unknown.
func ccValue(cc string) int {
	major, minor, _ := strings.Cut(cc, ".")
	a, err1 := strconv.Atoi(major)
	b, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return 0
	}
	return 10*a + b
}

// gpuSpeed is a GPU's peak training rate for ranking: its dense FP16 tensor rate,
// else TF32, else FP32.
func gpuSpeed(g hw.GPU) float64 {
	return max(g.FP16TFLOPS, g.TF32TFLOPS, g.FP32TFLOPS)
}

// OwnMachine reports whether a machine is the user's: one they added (cnntime machine
// add) or a device measured in the cache (this computer's CPU after a sweep, its GPU),
// whether or not they gave it a price. A measured device with no price is still theirs:
// its listing says "unpriced", its provider says "local".
func OwnMachine(m hw.Machine) bool {
	return m.User || m.Listing == hw.ListingLocal || m.Provider == hw.LocalProvider
}

// SortMachines orders machines for the selection list: the user's own first, then by
// provider (ProviderRank), then newest GPU first (compute capability, then speed),
// then fewest GPUs, then cheapest. gpus maps GPU ids to their specifications.
func SortMachines(ms []hw.Machine, gpus map[string]hw.GPU) {
	slices.SortStableFunc(ms, func(a, b hw.Machine) int {
		ua, ub := OwnMachine(a), OwnMachine(b)
		if ua != ub {
			if ua {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(ProviderRank(a.Provider), ProviderRank(b.Provider)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Provider, b.Provider); c != 0 {
			return c
		}
		ga, gb := gpus[a.GPUID], gpus[b.GPUID]
		if c := cmp.Compare(ccValue(gb.ComputeCapability), ccValue(ga.ComputeCapability)); c != 0 {
			return c
		}
		if c := cmp.Compare(gpuSpeed(gb), gpuSpeed(ga)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.GPUCount, b.GPUCount); c != 0 {
			return c
		}
		return cmp.Compare(a.PriceUSDPerHour, b.PriceUSDPerHour)
	})
}

// minCurrentCC is the oldest GPU generation listed by default: Volta (7.0). Kepler
// (K80) and Pascal (P100) instances are retired or being retired by every provider.
const minCurrentCC = 70

// PreviousGeneration reports whether a machine is hidden unless the user asks for
// older listings: a historical or low-confidence price, or a GPU older than Volta.
// The user's own and measured machines are never hidden.
func PreviousGeneration(m hw.Machine, gpus map[string]hw.GPU) bool {
	if OwnMachine(m) {
		return false
	}
	if m.Listing == hw.ListingHistorical {
		return true
	}
	g, ok := gpus[m.GPUID]
	if !ok || g.Architecture == "CPU" {
		return false
	}
	cc := ccValue(g.ComputeCapability)
	return cc > 0 && cc < minCurrentCC
}

// A QuickPick is a ready-made machine selection.
type QuickPick string

// The quick picks.
const (
	PickCheapest    QuickPick = "cheapest"    // the cheapest current one-GPU machine per provider
	PickFastest     QuickPick = "fastest"     // per provider, a one-GPU machine of its fastest GPU
	PickWorkstation QuickPick = "workstation" // the user's own and measured machines
)

// QuickPicks lists the quick picks in the order a panel shows them.
func QuickPicks() []QuickPick { return []QuickPick{PickCheapest, PickFastest, PickWorkstation} }

// Title is the pick's button text.
func (q QuickPick) Title() string {
	switch q {
	case PickCheapest:
		return "Cheapest/h"
	case PickFastest:
		return "Fastest GPU"
	case PickWorkstation:
		return "My workstation"
	}
	return string(q)
}

// Pick returns the machine ids of a quick pick among ms, in list order: for the
// cheapest and fastest, one machine per provider among complete, current offers (a
// comparable price, a current GPU generation), preferring one GPU; for the workstation,
// the user's own and measured machines. None is an empty list, never an error: the
// panel then says there is nothing to pick.
func Pick(q QuickPick, ms []hw.Machine, gpus map[string]hw.GPU) []string {
	best := map[string]hw.Machine{} // provider → its pick
	better := func(a, b hw.Machine) bool {
		switch q {
		case PickCheapest:
			return a.PriceUSDPerHour < b.PriceUSDPerHour
		default:
			sa, sb := gpuSpeed(gpus[a.GPUID]), gpuSpeed(gpus[b.GPUID])
			if sa != sb {
				return sa > sb
			}
			return a.PriceUSDPerHour < b.PriceUSDPerHour
		}
	}
	var out []string
	for _, m := range ms {
		switch q {
		case PickWorkstation:
			if OwnMachine(m) {
				out = append(out, m.ID)
			}
			continue
		case PickCheapest, PickFastest:
		default:
			return nil
		}
		if m.Listing != hw.ListingCurrent || m.PriceUSDPerHour <= 0 || m.GPUCount != 1 || PreviousGeneration(m, gpus) {
			continue
		}
		if cur, ok := best[m.Provider]; !ok || better(m, cur) {
			best[m.Provider] = m
		}
	}
	if q == PickWorkstation {
		return out
	}
	for _, m := range ms { // list order
		if b, ok := best[m.Provider]; ok && b.ID == m.ID {
			out = append(out, m.ID)
		}
	}
	return out
}

// FirstLaunchModels are the CNNs a first launch compares: the most common benchmark.
var FirstLaunchModels = []string{"resnet50"}

// firstLaunchMachines are a first launch's machines: current GPUs from four providers,
// from a low-cost L4 to an H100, and one 8-GPU instance whose curve runs past 1024.
var firstLaunchMachines = []string{
	"aws/g6.xlarge",
	"gcp/a2-highgpu-1g",
	"azure/Standard_NC40ads_H100_v5",
	"lambda/gpu_1x_h100_sxm5",
	"aws/p4d.24xlarge",
}

// FirstLaunchMachines returns the first launch's machines among those available.
func FirstLaunchMachines(ms []hw.Machine) []string {
	have := map[string]bool{}
	for _, m := range ms {
		have[m.ID] = true
	}
	var out []string
	for _, id := range firstLaunchMachines {
		if have[id] {
			out = append(out, id)
		}
	}
	return out
}
