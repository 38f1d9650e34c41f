package sessiond_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
)

// The README's example is examples/readme/main.go, and it runs: against a workspace's daemon it
// prints the three messages it appended.
func TestReadmeExample(t *testing.T) {
	t.Parallel()
	code, err := os.ReadFile("examples/readme/main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+string(code)+"```") {
		t.Fatal("README.md's example differs from examples/readme/main.go")
	}
	if n := strings.Count(string(code), "\n"); n > 40 {
		t.Fatalf("the example has %d lines", n)
	}
	ws := shared.Workspace // a session of its own on the shared daemon
	bin := filepath.Join(t.TempDir(), "readme")
	if out, err := exec.Command("go", "build", "-o", bin, "./examples/readme").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	cmd := exec.CommandContext(testdaemon.Ctx(t, 60*time.Second), bin)
	cmd.Dir = ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	want := "1 ROLE_USER list the files\n2 ROLE_ASSISTANT \n3 ROLE_TOOL a.txt b.txt\n"
	if string(out) != want {
		t.Fatalf("the example printed %q", out)
	}
}
