package cli

import (
	"flag"
	"strconv"
	"strings"
	"time"

	"cnntime/app"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

// nodeFlags are the multi-node run flags: --nodes and --network-gbps (predict, best,
// export), and best's choice of a node count (--budget, --deadline).
type nodeFlags struct {
	nodes       string
	networkGbps float64
	budget      float64
	deadline    time.Duration
}

// nodesUsage is the synopsis of the node flags.
const nodesUsage = "[--nodes N] [--network-gbps G]"

// bestNodesUsage is best's synopsis of them.
const bestNodesUsage = "[--nodes N|N,M,…|auto] [--budget USD | --deadline 36h] [--network-gbps G]"

func (nf *nodeFlags) register(fs *flag.FlagSet, choose bool) {
	help := "instances of each machine training together, data-parallel (gpu_count is the total; the price is N times)"
	if choose {
		help += "; a list 1,2,4 or auto (1 to 64 in powers of two) picks the fastest within --budget, the cheapest within --deadline, else the fastest"
		decimalVar(fs, &nf.budget, "budget", 0, "the most the run may cost, USD: best ranks the machines within it fastest first (and with several --nodes picks each machine's fastest count within it)")
		fs.DurationVar(&nf.deadline, "deadline", 0, "the longest the run may take, e.g. 24h: best ranks the machines that meet it cheapest first (and with several --nodes picks each machine's cheapest count that meets it)")
	}
	fs.StringVar(&nf.nodes, "nodes", "1", help)
	decimalVar(fs, &nf.networkGbps, "network-gbps", 0, "the network between nodes, Gbit/s per node (default: the catalog's for each machine, else 25 Gbit/s Ethernet, marked assumed)")
}

// counts parses --nodes: one count, or (choose) a list or auto.
func (nf *nodeFlags) counts(choose bool) ([]int, error) {
	s := strings.TrimSpace(nf.nodes)
	var out []int
	parts := splitList(s)
	if choose && s == "auto" {
		parts = []string{"1", "2", "4", "8", "16", "32", "64"}
	}
	for _, part := range parts {
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 || n > predictor.MaxNodes {
			return nil, Usagef("--nodes %q: give a node count from 1 to %d%s", nf.nodes, predictor.MaxNodes, map[bool]string{true: ", a list 1,2,4 or auto", false: ""}[choose])
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, Usagef("--nodes %q: list the counts ascending, without repeats", nf.nodes)
		}
		out = append(out, n)
	}
	switch {
	case len(out) == 0:
		return nil, Usagef("--nodes needs a count, e.g. --nodes 4")
	case len(out) > 1 && !choose:
		return nil, Usagef("--nodes %q: this command takes one node count; best chooses among several", nf.nodes)
	}
	if nf.budget < 0 || nf.deadline < 0 || (nf.budget > 0 && nf.deadline > 0) {
		return nil, Usagef("give --budget USD or --deadline DURATION (positive), not both")
	}
	return out, nil
}

// The range of --network-gbps, Gbit/s per node: from a slow office link to far past
// the fastest fabric (3,200 Gbit/s of EFA on a p5). Outside it the all-reduce's time
// stops being a finite number (1e-300 made it +Inf and broke --json).
const (
	minNetworkGbps = 0.1
	maxNetworkGbps = 100_000
)

// network is the --network-gbps override, or nil.
func (nf *nodeFlags) network() (*hw.Network, error) {
	if nf.networkGbps == 0 {
		return nil, nil
	}
	if !(nf.networkGbps >= minNetworkGbps && nf.networkGbps <= maxNetworkGbps) {
		return nil, Usagef("--network-gbps %g: give %g to %d Gbit/s per node (e.g. 25 for Ethernet, 400 for EFA)", nf.networkGbps, minNetworkGbps, maxNetworkGbps)
	}
	n, err := hw.UserNetwork(nf.networkGbps)
	if err != nil {
		return nil, Usagef("--network-gbps: %v", err)
	}
	return &n, nil
}

// bestCurves predicts q at every node count (q.Nodes set to each), concatenated count
// by count, each curve kept with its best point alone (Best 0, or -1 when no batch
// fits): all that best prints, so memory does not grow with the batch sizes.
func bestCurves(env *Env, eng *app.Engine, q app.Query, counts []int) ([]predictor.Curve, error) {
	var all []predictor.Curve
	q.TransientPoints = true // bestOnly copies the one or two points it keeps
	for _, n := range counts {
		q.Nodes = n
		err := app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) (predictor.Curve, error) {
			return bestOnly(*c), nil
		}, func(c predictor.Curve) error { all = append(all, c); return nil })
		if err != nil {
			return nil, err
		}
	}
	return all, nil
}

// bestOnly is c with only its best point and its recommended one (in batch order).
func bestOnly(c predictor.Curve) predictor.Curve {
	if c.Best < 0 {
		c.Points = nil
		return c
	}
	best := c.Points[c.Best]
	rec, ok := app.RecommendedPoint(&c)
	switch {
	case !ok || rec.Batch == best.Batch:
		c.Points, c.Best = []predictor.Point{best}, 0
	case rec.Batch < best.Batch:
		c.Points, c.Best = []predictor.Point{rec, best}, 1
	default:
		c.Points, c.Best = []predictor.Point{best, rec}, 0
	}
	return c
}

// chooseNodes keeps, for each model × machine, the curve of the node count best
// chooses: the fastest whose cost is within budget, or the cheapest whose time is
// within deadline, or the fastest. A pair with no count that meets the limit keeps the
// one closest to it (the cheapest, or the fastest) and says so in its note.
func chooseNodes(curves []predictor.Curve, budget float64, deadline time.Duration) ([]predictor.Curve, []string) {
	type key struct{ model, machine string }
	order := []key{}
	group := map[key][]int{}
	for i, c := range curves {
		k := key{c.Model, c.Machine}
		if _, ok := group[k]; !ok {
			order = append(order, k)
		}
		group[k] = append(group[k], i)
	}
	total := func(c *predictor.Curve) float64 { return c.Points[c.Best].TotalS }
	cost := func(c *predictor.Curve) float64 { return c.Points[c.Best].CostUSD }
	var out []predictor.Curve
	var notes []string
	for _, k := range order {
		pick, note := -1, ""
		better := func(i int) bool {
			c, p := &curves[i], &curves[pick]
			switch {
			case deadline > 0:
				return cost(c) < cost(p)
			default:
				return total(c) < total(p)
			}
		}
		for _, i := range group[k] {
			c := &curves[i]
			if c.Best < 0 {
				continue
			}
			within := (budget == 0 || (c.CostKnown && cost(c) <= budget)) && (deadline == 0 || total(c) <= deadline.Seconds())
			if within && (pick < 0 || better(i)) {
				pick = i
			}
		}
		if pick < 0 {
			// None meets the limit: the nearest to it.
			for _, i := range group[k] {
				c := &curves[i]
				if c.Best < 0 {
					continue
				}
				if pick < 0 || (budget > 0 && cost(c) < cost(&curves[pick])) || (budget == 0 && total(c) < total(&curves[pick])) {
					pick = i
				}
			}
			if pick >= 0 && (budget > 0 || deadline > 0) {
				note = "no node count meets the limit; the nearest is shown"
			}
		}
		if pick < 0 {
			pick = group[k][0]
		}
		out = append(out, curves[pick])
		notes = append(notes, note)
	}
	return out, notes
}

// writeNodeNotes prints, under a table, each multi-node machine's network: what the
// times assume, with its source (or that it is assumed); notes, where not nil, adds a
// note to each line.
func writeNodeNotes(env *Env, machines []string, nodes []int, nets []*hw.Network, notes []string) {
	var nn nodeNotes
	for i, m := range machines {
		note := ""
		if notes != nil {
			note = notes[i]
		}
		nn.add(m, nodes[i], nets[i], note)
	}
	nn.write(env)
}
