package hw

import (
	"strings"
	"testing"
)

// A catalog row whose names hold a control character (ESC, BEL, a line break inside a
// quoted cell, a bidirectional override) or are longer than a name may be is refused,
// naming its line and column: they reached job files and the terminal before.
func TestParseSkyPilotCatalogRefusesUnprintableNames(t *testing.T) {
	const header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n"
	for _, c := range []struct {
		row, col string
	}{
		{"p3.2xlarge,V100,1,8,61,3.06,,us-east-1\x1b[2J\n", "Region"},
		{"p3.2xlarge\a,V100,1,8,61,3.06,,us-east-1\n", "InstanceType"},
		{"p3.2xlarge,V100,1,8,61,3.06,,\"us-east-1\n#SBATCH --partition=evil\"\n", "Region"},
		{"p3.2xlarge,V100\u202e,1,8,61,3.06,,us-east-1\n", "AcceleratorName"},
		{"p3.2xlarge,V100,1,8,61,3.06,," + strings.Repeat("r", 129) + "\n", "Region"},
	} {
		_, err := ParseSkyPilotCatalog("aws", "vms.csv", []byte(header+c.row))
		if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), c.col) {
			t.Errorf("%q: %v; want a refusal of line 2's %s", c.row, err, c.col)
		}
	}
	if _, err := ParseSkyPilotCatalog("aws", "vms.csv", []byte(header+"p3.2xlarge,V100,1,8,61,3.06,,eu-central-1é\n")); err != nil {
		t.Errorf("a printable name: %v", err)
	}
}
