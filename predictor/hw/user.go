package hw

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// WorkstationID is the id of the user's own workstation, the machine whose GPUs the
// app detects.
const WorkstationID = UserProvider + "/workstation"

var nonSlug = regexp.MustCompile(`[^a-z0-9._-]+`)

// UserMachineID turns a name the user gives ("Lab box 2") into a machine id
// ("user/lab-box-2"). A name with no letter or digit is an error.
func UserMachineID(name string) (string, error) {
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(name)), "-"), "-._")
	if slug == "" {
		return "", fmt.Errorf("machine name %q has no letter or digit; give a name such as \"lab box\"", name)
	}
	return UserProvider + "/" + slug, nil
}

// ParsePrice reads a price in US dollars per hour as typed by the user: a finite,
// non-negative number ("1.25", "0"). Anything else is an error saying so.
func ParsePrice(text string) (float64, error) {
	s := strings.TrimPrefix(strings.TrimSpace(text), "$")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("price %q is not a number; give US dollars per hour, e.g. 1.25", text)
	}
	if err := CheckPrice(v); err != nil {
		return 0, err
	}
	return v, nil
}

// CheckPrice accepts a finite, non-negative price in US dollars per hour.
func CheckPrice(usdPerHour float64) error {
	switch {
	case math.IsNaN(usdPerHour) || math.IsInf(usdPerHour, 0):
		return fmt.Errorf("price %v is not a number; give US dollars per hour, e.g. 1.25", usdPerHour)
	case usdPerHour < 0:
		return fmt.Errorf("price %g is negative; give US dollars per hour, 0 or more", usdPerHour)
	}
	return nil
}

// CheckUserMachine validates a machine the user defines: a "user/NAME" id that no
// catalog machine has, a catalog GPU, at least one GPU, a valid price and no negative
// vCPUs or memory. It changes nothing; a caller stores the machine only when it passes.
func (c *Catalog) CheckUserMachine(m Machine) error {
	if !strings.HasPrefix(m.ID, UserProvider+"/") || !machineIDPattern.MatchString(m.ID) {
		return fmt.Errorf("user machine id %q must be %s/NAME (letters, digits, '.', '_' and '-')", m.ID, UserProvider)
	}
	if _, err := c.Machine(m.ID); err == nil {
		return fmt.Errorf("machine id %q is already a catalog machine; choose another name", m.ID)
	}
	if _, err := c.GPU(m.GPUID); err != nil {
		return fmt.Errorf("machine %s: %w", m.ID, err)
	}
	if m.GPUCount < 1 {
		return fmt.Errorf("machine %s: GPU count %d must be at least 1", m.ID, m.GPUCount)
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
	return nil
}

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
