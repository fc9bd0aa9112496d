package launch

import (
	"os/exec"
	"strings"
	"testing"
)

// Text from a price catalog or a cache (a machine's id, a region, the prediction that
// names them) with ESC, BEL or a line break reaches neither file raw: the SkyPilot task
// loads in PyYAML (SkyPilot's loader refused it), and the Slurm script gets no line of
// its own from a region ("#SBATCH --partition=evil").
func TestLaunchFilesWriteCatalogTextOut(t *testing.T) {
	r := p4d()
	r.Machine = "aws/p4d\x1b[2J.24xlarge"
	r.Region = "us-east-1\a"
	r.Instance = "p4d.24xlarge\u2028"
	r.Prediction = "31m01s on us-east-1\n#SBATCH --partition=evil\x1b]0;x\a"
	sky, err := SkyPilot(r)
	if err != nil {
		t.Fatal(err)
	}
	slurm, err := Slurm(r, SlurmOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"task": string(sky), "script": string(slurm)} {
		if i := strings.IndexFunc(text, func(r rune) bool { return r != '\n' && (r < 0x20 || r == 0x7f || r == 0x2028) }); i >= 0 {
			t.Errorf("the %s holds the raw character %q at byte %d", name, text[i:i+1], i)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, "' "), "#SBATCH --partition") {
				t.Errorf("the %s has the line %q", name, line)
			}
		}
	}
	if !strings.Contains(string(slurm), `31m01s on us-east-1 #SBATCH --partition=evil\x1b]0;x\x07`) {
		t.Errorf("the script's PREDICTION does not write the text out:\n%s", slurm)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to load the task with PyYAML")
	}
	load := exec.Command(py, "-c", "import sys, yaml; t = yaml.safe_load(sys.stdin); print(t['resources']['infra'])")
	load.Stdin = strings.NewReader(string(sky))
	out, err := load.CombinedOutput()
	if strings.Contains(string(out), "No module named") {
		t.Skip("python3 has no PyYAML")
	}
	if err != nil || string(out) != "aws/us-east-1\a\n" {
		t.Errorf("PyYAML read the task as %q (%v), want its region back", out, err)
	}
}
