package protofd

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

const childEnv = "CNNTIME_TEST_PROTOFD_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		f, err := Claim()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("a C library chatters on stdout")
		os.Stdout.WriteString("more chatter\n")
		fmt.Fprintln(Out(), `{"type":"done"}`)
		if g, _ := Claim(); g != f {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestClaimMovesChatterToStderr(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v: %s", err, stderr.String())
	}
	if got := stdout.String(); got != "{\"type\":\"done\"}\n" {
		t.Errorf("the protocol stream = %q, want only the protocol line", got)
	}
	if got := stderr.String(); got != "a C library chatters on stdout\nmore chatter\n" {
		t.Errorf("stderr = %q, want the chatter", got)
	}
}
