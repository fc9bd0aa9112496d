package predictor

import (
	"fmt"
	"strconv"
	"strings"

	"cnntime/predictor/hw"
)

// Software is the release of the kernel libraries (cuDNN, cuBLAS and the framework
// built on them) that runs a step: how good each kernel is on a GPU depends on how
// long the libraries had been tuned for its architecture when they were released. A
// library released as the architecture launched reaches less of its peak than one
// released two years later (kernels.Calibration.Maturity); Framework says which
// kernels run and how the host issues them, Software how well each one runs.
type Software struct {
	// Name is the release as cnntime writes it: pytorch-X.Y (PyTorch's pip wheels),
	// ngc-YY.MM (an NVIDIA NGC framework container) or YYYY-MM (any release of that
	// month).
	Name string `json:"name"`
	// Month is when its kernel libraries were released.
	Month hw.Month `json:"month"`
	// Note says what it is, for the answers that name it.
	Note string `json:"note"`
}

// pytorchRelease is one PyTorch minor release: its month (the release of its pip
// wheels, github.com/pytorch/pytorch releases; RELEASE.md's release cadence from 2.1)
// and the cuDNN major its CUDA wheels bundle (RELEASE.md's compatibility matrix: 8.3
// to 8.9 for 1.12 to 2.3; cuDNN 9 from 2.4, cuDNN 7 before 1.7).
type pytorchRelease struct {
	version string
	month   hw.Month
	cudnn   int
}

var pytorchReleases = []pytorchRelease{
	{"1.0", hw.MonthOf(2018, 12), 7}, {"1.1", hw.MonthOf(2019, 5), 7}, {"1.2", hw.MonthOf(2019, 8), 7},
	{"1.3", hw.MonthOf(2019, 10), 7}, {"1.4", hw.MonthOf(2020, 1), 7}, {"1.5", hw.MonthOf(2020, 4), 7},
	{"1.6", hw.MonthOf(2020, 7), 7}, {"1.7", hw.MonthOf(2020, 10), 8}, {"1.8", hw.MonthOf(2021, 3), 8},
	{"1.9", hw.MonthOf(2021, 6), 8}, {"1.10", hw.MonthOf(2021, 10), 8}, {"1.11", hw.MonthOf(2022, 3), 8},
	{"1.12", hw.MonthOf(2022, 6), 8}, {"1.13", hw.MonthOf(2022, 10), 8}, {"2.0", hw.MonthOf(2023, 3), 8},
	{"2.1", hw.MonthOf(2023, 10), 8}, {"2.2", hw.MonthOf(2024, 1), 8}, {"2.3", hw.MonthOf(2024, 4), 8},
	{"2.4", hw.MonthOf(2024, 7), 9}, {"2.5", hw.MonthOf(2024, 10), 9}, {"2.6", hw.MonthOf(2025, 1), 9},
	{"2.7", hw.MonthOf(2025, 4), 9}, {"2.8", hw.MonthOf(2025, 8), 9}, {"2.9", hw.MonthOf(2025, 10), 9},
	{"2.10", hw.MonthOf(2026, 1), 9}, {"2.11", hw.MonthOf(2026, 3), 9},
}

// CurrentSoftware is the newest release cnntime knows, which every answer assumes
// unless told otherwise: PyTorch 2.11 (March 2026, cuDNN 9).
var CurrentSoftware = pytorchSoftware(pytorchReleases[len(pytorchReleases)-1])

// OldestSoftwareMonth is the earliest release month cnntime takes: the first
// architecture it dates (Kepler, hw.LaunchMonth) shipped in November 2012.
var OldestSoftwareMonth = hw.MonthOf(2012, 11)

func pytorchSoftware(r pytorchRelease) Software {
	return Software{Name: "pytorch-" + r.version, Month: r.month,
		Note: fmt.Sprintf("PyTorch %s (%s %d, cuDNN %d)", r.version, monthNames[r.month.MonthOfYear()-1], r.month.Year(), r.cudnn)}
}

var monthNames = [12]string{"January", "February", "March", "April", "May", "June", "July", "August", "September",
	"October", "November", "December"}

// SoftwareChoices lists the releases a chooser offers: current, then PyTorch's from the
// newest back (ParseSoftware takes NGC containers and months besides).
func SoftwareChoices() []string {
	out := []string{"current"}
	for i := len(pytorchReleases) - 1; i >= 0; i-- {
		out = append(out, "pytorch-"+pytorchReleases[i].version)
	}
	return out
}

// SoftwareExamples are the kinds of release ParseSoftware takes, for help and errors.
const SoftwareExamples = "current (the newest release cnntime knows), pytorch-X.Y (PyTorch's pip wheels, 1.0 to 2.11), ngc-YY.MM (an NVIDIA NGC container, e.g. ngc-24.10) or YYYY-MM (any release of that month)"

// ParseSoftware reads a release: current or "" (CurrentSoftware), pytorch-X.Y,
// ngc-YY.MM or YYYY-MM, between November 2012 and CurrentSoftware's month.
func ParseSoftware(s string) (Software, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "" || t == "current":
		return CurrentSoftware, nil
	case strings.HasPrefix(t, "pytorch-") || strings.HasPrefix(t, "torch-"):
		v := t[strings.IndexByte(t, '-')+1:]
		if parts := strings.Split(v, "."); len(parts) == 3 { // 2.6.0: the minor release's
			v = parts[0] + "." + parts[1]
		}
		for _, r := range pytorchReleases {
			if r.version == v {
				return pytorchSoftware(r), nil
			}
		}
		return Software{}, fmt.Errorf("unknown software %q: cnntime knows PyTorch %s to %s (write e.g. pytorch-1.13 or pytorch-2.6)",
			s, pytorchReleases[0].version, pytorchReleases[len(pytorchReleases)-1].version)
	case strings.HasPrefix(t, "ngc-"):
		yy, mm, ok := strings.Cut(strings.TrimPrefix(t, "ngc-"), ".")
		y, err1 := strconv.Atoi(yy)
		m, err2 := strconv.Atoi(mm)
		if !ok || err1 != nil || err2 != nil || len(yy) != 2 || m < 1 || m > 12 {
			return Software{}, fmt.Errorf("unknown software %q: an NGC container is ngc-YY.MM, e.g. ngc-24.10", s)
		}
		month := hw.MonthOf(2000+y, m)
		if err := checkSoftwareMonth(s, month); err != nil {
			return Software{}, err
		}
		return Software{Name: fmt.Sprintf("ngc-%02d.%02d", y, m), Month: month,
			Note: fmt.Sprintf("NVIDIA NGC container %02d.%02d (%s %d)", y, m, monthNames[m-1], 2000+y)}, nil
	}
	yy, mm, ok := strings.Cut(t, "-")
	y, err1 := strconv.Atoi(yy)
	m, err2 := strconv.Atoi(mm)
	if !ok || err1 != nil || err2 != nil || len(yy) != 4 || m < 1 || m > 12 {
		return Software{}, fmt.Errorf("unknown software %q: give %s", s, SoftwareExamples)
	}
	month := hw.MonthOf(y, m)
	if err := checkSoftwareMonth(s, month); err != nil {
		return Software{}, err
	}
	return Software{Name: month.String(), Month: month, Note: fmt.Sprintf("a release of %s %d", monthNames[m-1], y)}, nil
}

func checkSoftwareMonth(s string, m hw.Month) error {
	switch {
	case m < OldestSoftwareMonth:
		return fmt.Errorf("software %q is from %s, before the oldest GPU architecture cnntime dates (%s)", s, m, OldestSoftwareMonth)
	case m > CurrentSoftware.Month:
		return fmt.Errorf("software %q is from %s, after the newest release cnntime knows (%s, %s): give current", s, m, CurrentSoftware.Name, CurrentSoftware.Month)
	}
	return nil
}

// orDefault is s, or CurrentSoftware when s is the zero value.
func (s Software) orDefault() Software {
	if s.Month == 0 {
		return CurrentSoftware
	}
	return s
}

// IsZero reports whether s names no release (the zero value: CurrentSoftware).
func (s Software) IsZero() bool { return s.Month == 0 }

// PyTorchMajor is 1 or 2 for a pytorch-X.Y release, 0 for any other.
func (s Software) PyTorchMajor() int {
	v, ok := strings.CutPrefix(s.orDefault().Name, "pytorch-")
	if !ok {
		return 0
	}
	major, _, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(major)
	return n
}

// DefaultFramework is the stack a run on s uses when none is named: PyTorch 1.x's
// eager defaults on a PyTorch 1 release, PyTorch 2's on any other.
func (s Software) DefaultFramework() Framework {
	if s.PyTorchMajor() == 1 {
		return PyTorch1
	}
	return PyTorch2
}

// CheckFramework reports a stack that s cannot run: PyTorch 1 has neither PyTorch 2's
// eager defaults nor torch.compile.
func (s Software) CheckFramework(f Framework) error {
	f = f.orDefault()
	if s.PyTorchMajor() == 1 && (f == PyTorch2 || f.Compiles()) {
		return fmt.Errorf("%s cannot run the %s stack (%s): PyTorch 1 has neither torch.compile nor PyTorch 2's eager defaults; use pytorch1, or a PyTorch 2 release", s.Name, f, f.Description())
	}
	return nil
}
