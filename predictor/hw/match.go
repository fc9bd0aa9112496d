package hw

import (
	"regexp"
	"strings"
)

// nameRule maps a GPU name as the driver reports it to a catalog id: every token in
// need must be in the name, none in avoid, and the memory must be in (above, atMost]
// GiB (zero bounds are open).
type nameRule struct {
	need, avoid   []string
	above, atMost float64
	id            string
}

// nameRules are tried in order; the more specific come first.
var nameRules = []nameRule{
	{need: []string{"gh200"}, id: "gh200"},
	{need: []string{"h200"}, id: "h200"},
	{need: []string{"h100", "nvl"}, id: "h100-nvl"},
	{need: []string{"h100", "pcie"}, id: "h100-pcie"},
	{need: []string{"h100"}, id: "h100-sxm"},
	{need: []string{"a100", "pcie"}, above: 48, id: "a100-pcie-80gb"},
	{need: []string{"a100"}, avoid: []string{"pcie"}, above: 48, id: "a100-sxm4-80gb"},
	{need: []string{"a100"}, avoid: []string{"pcie"}, atMost: 48, id: "a100-sxm4-40gb"},
	{need: []string{"v100"}, avoid: []string{"pcie"}, above: 24, id: "v100-sxm2-32gb"},
	{need: []string{"v100"}, avoid: []string{"pcie"}, atMost: 24, id: "v100-sxm2-16gb"},
	{need: []string{"p100"}, avoid: []string{"sxm2"}, id: "p100-pcie-16gb"},
	{need: []string{"k80"}, id: "k80"},
	{need: []string{"t4"}, id: "t4"},
	{need: []string{"a10g"}, id: "a10g"},
	{need: []string{"a10"}, id: "a10"},
	{need: []string{"l40s"}, id: "l40s"},
	{need: []string{"l4"}, id: "l4"},
	{need: []string{"a6000"}, avoid: []string{"ada"}, id: "rtx-a6000"},
	{need: []string{"4090"}, avoid: []string{"laptop", "d"}, id: "rtx-4090"},
	{need: []string{"3090"}, avoid: []string{"ti", "laptop"}, id: "rtx-3090"},
	{need: []string{"2080", "ti"}, id: "rtx-2080-ti"},
	{need: []string{"1080", "ti"}, id: "gtx-1080-ti"},
	{need: []string{"titan", "v"}, id: "titan-v"},
}

var nameSeparators = regexp.MustCompile(`[^a-z0-9]+`)

// MatchGPUName maps the name a driver reports ("Tesla V100-SXM2-16GB", "NVIDIA GeForce
// RTX 3090") and the memory it reports in GiB (0 if not known) to a catalog GPU id.
// It returns "" and false when no catalog GPU is that model; the user then picks one.
func (c *Catalog) MatchGPUName(name string, memoryGiB float64) (string, bool) {
	tokens := map[string]bool{}
	for _, t := range nameSeparators.Split(strings.ToLower(name), -1) {
		tokens[t] = true
	}
	for _, r := range nameRules {
		if !allOf(tokens, r.need) || anyOf(tokens, r.avoid) {
			continue
		}
		if memoryGiB > 0 && ((r.above > 0 && memoryGiB <= r.above) || (r.atMost > 0 && memoryGiB > r.atMost)) {
			continue
		}
		if memoryGiB == 0 && r.above > 0 && !mentionsMoreThan(tokens, r.above) {
			continue // no memory figure: take the smaller part unless the name says otherwise
		}
		if _, err := c.GPU(r.id); err != nil {
			return "", false
		}
		return r.id, true
	}
	return "", false
}

func allOf(tokens map[string]bool, need []string) bool {
	for _, t := range need {
		if !tokens[t] {
			return false
		}
	}
	return true
}

func anyOf(tokens map[string]bool, avoid []string) bool {
	for _, t := range avoid {
		if tokens[t] {
			return true
		}
	}
	return false
}

// mentionsMoreThan reports whether the name carries a memory size token ("80gb")
// above gib.
func mentionsMoreThan(tokens map[string]bool, gib float64) bool {
	for t := range tokens {
		if n, ok := strings.CutSuffix(t, "gb"); ok {
			var v float64
			for _, ch := range n {
				if ch < '0' || ch > '9' {
					v = -1
					break
				}
				v = v*10 + float64(ch-'0')
			}
			if v > gib {
				return true
			}
		}
	}
	return false
}
