package cpu

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// InfoValue is the value of the first of keys that /proc/cpuinfo's text gives (keys in
// the order asked, each at its first line, its spaces folded), "" when it gives none:
// "model name" on x86, "Model" or "Hardware" on the Arm servers whose kernel names one.
func InfoValue(cpuinfo []byte, keys ...string) string {
	fields := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Join(strings.Fields(v), " ")
		if _, seen := fields[k]; !seen && v != "" {
			fields[k] = v
		}
	}
	for _, k := range keys {
		if v := fields[k]; v != "" {
			return v
		}
	}
	return ""
}

// MemTotalBytes is MemTotal in /proc/meminfo's text, in bytes; 0 when it is absent or
// not a count of kB.
func MemTotalBytes(meminfo []byte) int64 {
	for _, line := range strings.Split(string(meminfo), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb <= 0 || len(f) > 2 && f[2] != "kB" {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// readProc is a file of /proc, nil where this system has none.
func readProc(name string) []byte {
	b, err := os.ReadFile("/proc/" + name)
	if err != nil {
		return nil
	}
	return b
}

// ProcInfo is this machine's /proc/cpuinfo and /proc/meminfo (nil where it has none:
// not Linux).
func ProcInfo() (cpuinfo, meminfo []byte) { return readProc("cpuinfo"), readProc("meminfo") }
