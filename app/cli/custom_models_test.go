package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cnntime/db"
)

func TestCacheImportAndInfoCountCustomModels(t *testing.T) {
	dir := t.TempDir()
	local, other := filepath.Join(dir, "local.db"), filepath.Join(dir, "other.db")
	putModels(t, local, [2]string{"mine", tinyModelJSON("mine")}, [2]string{"shared", tinyModelJSON("shared")})
	theirShared := strings.Replace(tinyModelJSON("shared"), `"classes": 4`, `"classes": 8`, 1)
	putModels(t, other, [2]string{"theirs", tinyModelJSON("theirs")}, [2]string{"shared", theirShared})

	code, out, errOut := runCLIWithDB(t, local, "cache", "import", other)
	if code != 0 {
		t.Fatalf("cache import: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"0 user machines and 1 custom models added", "custom models not imported: shared (this cache has a different model of the same name and keeps it"} {
		if !strings.Contains(out, want) {
			t.Errorf("import report lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLIWithDB(t, local, "cache", "import", other, "--json")
	var rep db.ImportReport
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.CustomModels != 0 || !slices.Equal(rep.CustomModelClashes, []string{"shared"}) {
		t.Errorf("second import --json (exit %d, %v): %+v", code, err, rep)
	}

	code, out, _ = runCLIWithDB(t, local, "cache", "info")
	if code != 0 || !strings.Contains(out, "; 3 custom models") {
		t.Errorf("cache info (exit %d) does not count 3 custom models:\n%s", code, out)
	}
	code, out, _ = runCLIWithDB(t, local, "cache", "info", "--json")
	var info db.Info
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil || info.CustomModels != 3 {
		t.Errorf("cache info --json (exit %d, %v): custom_models %d, want 3", code, err, info.CustomModels)
	}
	code, out, _ = runCLIWithDB(t, local, "model", "theirs")
	if code != 0 || !strings.Contains(out, "theirs (Custom)") {
		t.Errorf("the imported model is not found by name (exit %d):\n%s", code, out)
	}
}
