package hw

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"cnntime/predictor/host"
)

// WorkstationID is the id of the user's own workstation, the machine whose GPUs the
// app detects.
const WorkstationID = UserProvider + "/workstation"

// nonSlug is what a user machine's id leaves out of its name: all but letters (of any
// script: "é名" is a name), digits, '.', '_' and '-'. It and userIDPattern are
// compiled when first used: their Unicode classes take a millisecond, which every
// command's start would otherwise pay.
var nonSlug = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^\p{L}\p{M}\p{N}._-]+`) })

// userIDPattern is a user machine's id: user/NAME, its name as UserMachineID makes it.
var userIDPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^user/[\p{L}\p{N}][\p{L}\p{M}\p{N}._-]*$`)
})

// UserMachineID turns a name the user gives ("Lab box 2", "rtx/3090 (home)") into a
// machine id ("user/lab-box-2", "user/rtx-3090-home"). A name with no letter or digit,
// one that reads as a file path ("../../etc" would silently be "user/etc") and one with
// a control character are errors.
func UserMachineID(name string) (string, error) {
	trimmed := strings.TrimSpace(name)
	switch {
	case strings.Contains(trimmed, "..") || strings.HasPrefix(trimmed, "/") || strings.HasPrefix(trimmed, ".") || strings.Contains(trimmed, `\`):
		return "", fmt.Errorf("machine name %q reads as a file path; give a name such as \"lab box 2\" (its id is user/NAME, not a file)", name)
	case strings.IndexFunc(trimmed, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return "", fmt.Errorf("machine name %q holds a control character; give a name such as \"lab box 2\"", name)
	}
	slug := strings.Trim(nonSlug().ReplaceAllString(strings.ToLower(trimmed), "-"), "-._")
	if slug == "" {
		return "", fmt.Errorf("machine name %q has no letter or digit; give a name such as \"lab box\"", name)
	}
	return UserProvider + "/" + slug, nil
}

// decimal is a price as a person writes it: digits with an optional fraction and
// exponent ("1.25", "0", ".5", "2e-3"); not Go's other float forms ("0x1p4" is 16,
// "Inf", "NaN").
var decimal = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// MaxPriceUSDPerHour bounds a price: no machine costs more an hour (the largest cloud
// instances cost about $100), so a larger figure is a mistake.
const MaxPriceUSDPerHour = 1e6

// ParsePrice reads a price in US dollars per hour as typed by the user: a decimal
// number from 0 to MaxPriceUSDPerHour ("1.25", "0"). Anything else is an error saying so.
func ParsePrice(text string) (float64, error) {
	s := strings.TrimPrefix(strings.TrimSpace(text), "$")
	if !decimal.MatchString(s) {
		return 0, fmt.Errorf("price %q is not a number; give US dollars per hour as a decimal number, e.g. 1.25", text)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("price %q is not a number; give US dollars per hour, e.g. 1.25", text)
	}
	if err := CheckPrice(v); err != nil {
		return 0, err
	}
	return v, nil
}

// CheckPrice accepts a finite price in US dollars per hour from 0 to MaxPriceUSDPerHour.
func CheckPrice(usdPerHour float64) error {
	switch {
	case math.IsNaN(usdPerHour) || math.IsInf(usdPerHour, 0):
		return fmt.Errorf("price %v is not a number; give US dollars per hour, e.g. 1.25", usdPerHour)
	case usdPerHour < 0:
		return fmt.Errorf("price %g is negative; give US dollars per hour, 0 or more", usdPerHour)
	case usdPerHour > MaxPriceUSDPerHour:
		return fmt.Errorf("price $%g/h is above $%g/h, more than any machine costs; give US dollars per hour", usdPerHour, float64(MaxPriceUSDPerHour))
	}
	return nil
}

// MaxMachineGPUs bounds the GPUs of one machine (the largest cloud instances have 16);
// more GPUs train as several nodes (--nodes).
const MaxMachineGPUs = 64

// CheckUserMachine validates a machine the user defines: a "user/NAME" id that no
// catalog machine has, a catalog GPU, at least one GPU, a valid price and no negative
// vCPUs or memory. It changes nothing; a caller stores the machine only when it passes.
func (c *Catalog) CheckUserMachine(m Machine) error {
	if !strings.HasPrefix(m.ID, UserProvider+"/") || !userIDPattern().MatchString(m.ID) {
		return fmt.Errorf("user machine id %q must be %s/NAME (letters, digits, '.', '_' and '-')", m.ID, UserProvider)
	}
	if _, err := c.Machine(m.ID); err == nil {
		return fmt.Errorf("machine id %q is already a catalog machine; choose another name", m.ID)
	}
	if _, err := c.GPU(m.GPUID); err != nil {
		return fmt.Errorf("machine %s: %w", m.ID, err)
	}
	if m.GPUCount < 1 || m.GPUCount > MaxMachineGPUs {
		return fmt.Errorf("machine %s: GPU count %d must be from 1 to %d (more GPUs train as several nodes: --nodes)", m.ID, m.GPUCount, MaxMachineGPUs)
	}
	if err := CheckPrice(m.PriceUSDPerHour); err != nil {
		return fmt.Errorf("machine %s: %w", m.ID, err)
	}
	if m.VCPUs < 0 {
		return fmt.Errorf("machine %s: %d vCPUs is negative", m.ID, m.VCPUs)
	}
	if m.MemoryGiB < 0 || math.IsNaN(m.MemoryGiB) || math.IsInf(m.MemoryGiB, 0) {
		return fmt.Errorf("machine %s: memory %v GiB must be a number, 0 (unknown) or more", m.ID, m.MemoryGiB)
	}
	if m.CPU != nil {
		if strings.TrimSpace(m.CPU.Model) == "" {
			return fmt.Errorf("machine %s: its CPU needs a model name, e.g. \"AMD EPYC 9354\"", m.ID)
		}
		if err := CheckName(m.CPU.Model); err != nil {
			return fmt.Errorf("machine %s: CPU %w", m.ID, err)
		}
		if g := m.CPU.TurboGHz; g < 0 || g > MaxCPUGHz || math.IsNaN(g) {
			return fmt.Errorf("machine %s: CPU clock %v GHz: give its turbo clock, above 0 and at most %g GHz (0: unknown)", m.ID, g, float64(MaxCPUGHz))
		}
	}
	return nil
}

// UserCPUSource is the source of the CPU of a machine of the user's own: named with
// cnntime machine add --cpu, or read from this computer by cnntime machine detect.
const UserCPUSource = "given for your machine (cnntime machine add --cpu, or found by cnntime machine detect)"

// UserCPU is the host CPU the user named for a machine of their own: its model and
// turbo clock in GHz (0: unknown).
func UserCPU(model string, turboGHz float64) *host.CPU {
	return &host.CPU{Model: model, TurboGHz: turboGHz, Source: UserCPUSource}
}

// MaxCPUGHz bounds a host CPU's clock (the fastest shipped parts boost to about 6 GHz).
const MaxCPUGHz = 10

// Merge returns the machines a user compares: the catalog's, in catalog order, with
// the user's price overrides applied (PriceOverridden set, CatalogPrice keeping the
// catalog's figure), followed by the user's own machines sorted by id. Overrides for
// ids the catalog no longer has are ignored, and user machines are marked as such.
func (c *Catalog) Merge(user []Machine, overrides map[string]float64) []Machine {
	return MergeMachines(c.machines, user, overrides)
}

// MergeMachines is Merge over any list of cloud machines (the catalog's joined with
// imported prices: Catalog.WithOffers): base in its order with the overrides applied,
// then the user's machines sorted by id.
func MergeMachines(base, user []Machine, overrides map[string]float64) []Machine {
	out := make([]Machine, 0, len(base)+len(user))
	for _, m := range base {
		if p, ok := overrides[m.ID]; ok && CheckPrice(p) == nil {
			m.CatalogPrice = m.PriceUSDPerHour
			m.PriceUSDPerHour = p
			m.PriceOverridden = true
			m.PriceKind = UserPrice
		}
		out = append(out, m)
	}
	mine := append([]Machine(nil), user...)
	sort.Slice(mine, func(i, j int) bool { return mine[i].ID < mine[j].ID })
	for _, m := range mine {
		m.User = true
		m.Provider = UserProvider
		m.Listing = ListingUser
		m.PriceKind = UserPrice
		out = append(out, m)
	}
	return out
}
