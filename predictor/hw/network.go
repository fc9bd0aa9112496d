package hw

import (
	"fmt"
	"strings"
)

// NetworksFile is the catalog file of the networks between instances.
const NetworksFile = "networks.csv"

var networkColumns = []string{"machine", "fabric", "gbps", "latency_us", "source"}

// Network is what joins several instances of a machine for multi-node training: the
// fabric (EFA, InfiniBand, Ethernet), each node's bandwidth per direction in Gbit/s
// and the latency of one message. Zero figures are unknown.
type Network struct {
	Fabric    string  `json:"fabric"`
	Gbps      float64 `json:"gbps"`       // per node and direction, Gbit/s; 0: unknown
	LatencyUS float64 `json:"latency_us"` // one message, microseconds; 0: unknown
	// LatencyAssumed is set on a prediction's network when the catalog gave no latency
	// and the model's own per-step latency stands in LatencyUS.
	LatencyAssumed bool   `json:"latency_assumed,omitempty"`
	Source         string `json:"source"`
	// Assumed is true when the catalog has no figure for the machine (or the user gave
	// one): the network is then an assumption, named as such wherever it is shown.
	Assumed bool `json:"assumed"`
}

// AssumedNetwork is used for a machine whose network the public sources do not give:
// 25 Gbit/s Ethernet, what AWS lists for its large instances of the GPU generations
// before EFA (p2.16xlarge, p3.16xlarge) and the slowest of the catalog's multi-GPU
// instances. Results that use it say so.
var AssumedNetwork = Network{
	Fabric:  "Ethernet",
	Gbps:    25,
	Source:  "ASSUMED: no published network figure for this machine; 25 Gbit/s Ethernet taken (AWS p2.16xlarge/p3.16xlarge class)",
	Assumed: true,
}

// Networks are the catalog's inter-node network figures by machine id.
type Networks struct {
	byMachine map[string]Network // lower-case machine id → network
}

// ParseNetworks reads and validates the network file against the catalog: every row
// names a catalog machine once, with a fabric, a source, and a bandwidth that is known
// (an unknown network is a machine left out of the file, not a row of zeros).
func ParseNetworks(data []byte, c *Catalog) (*Networks, error) {
	t, err := readTable(NetworksFile, data, networkColumns)
	if err != nil {
		return nil, err
	}
	n := &Networks{byMachine: map[string]Network{}}
	for _, r := range t.rows {
		id, err := r.required("machine")
		if err != nil {
			return nil, err
		}
		if _, err := c.Machine(id); err != nil {
			return nil, r.errorf("machine", "%q is not in %s", id, MachinesFile)
		}
		key := strings.ToLower(id)
		if _, dup := n.byMachine[key]; dup {
			return nil, r.errorf("machine", "%q is listed twice", id)
		}
		var net Network
		if net.Fabric, err = r.required("fabric"); err != nil {
			return nil, err
		}
		if net.Gbps, err = r.number("gbps"); err != nil {
			return nil, err
		}
		if net.Gbps == 0 {
			return nil, r.errorf("gbps", "is empty or zero; leave a machine whose bandwidth is unknown out of the file")
		}
		if net.LatencyUS, err = r.number("latency_us"); err != nil {
			return nil, err
		}
		if net.Source, err = r.required("source"); err != nil {
			return nil, err
		}
		n.byMachine[key] = net
	}
	return n, nil
}

// For returns the network between instances of the machine: the catalog's, or
// AssumedNetwork when the catalog has none (n may be nil).
func (n *Networks) For(machineID string) Network {
	if n != nil {
		if net, ok := n.byMachine[strings.ToLower(machineID)]; ok {
			return net
		}
	}
	return AssumedNetwork
}

// Known reports whether the catalog has a network figure for the machine.
func (n *Networks) Known(machineID string) bool {
	if n == nil {
		return false
	}
	_, ok := n.byMachine[strings.ToLower(machineID)]
	return ok
}

// UserNetwork is a network the user gave: gbps Gbit/s per node (> 0), marked assumed.
func UserNetwork(gbps float64) (Network, error) {
	if !(gbps > 0) || gbps > 1e6 {
		return Network{}, fmt.Errorf("network bandwidth %g Gbit/s: give a positive figure per node, e.g. 100 or 400", gbps)
	}
	return Network{Fabric: "user-given", Gbps: gbps, Source: fmt.Sprintf("given by the user: %g Gbit/s per node", gbps), Assumed: true}, nil
}

// String names the network for a result line: "EFA 400 Gbit/s" or
// "Ethernet 25 Gbit/s (assumed)".
func (n Network) String() string {
	s := fmt.Sprintf("%s %g Gbit/s", n.Fabric, n.Gbps)
	if n.Assumed {
		s += " (assumed)"
	}
	if n.LatencyAssumed {
		s += fmt.Sprintf(", %g µs per step (assumed)", n.LatencyUS)
	}
	return s
}
