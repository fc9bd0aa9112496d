package app

import "testing"

// TestLaunchBatchNote: the header's "# Batch:" line and the window's launch dialog say
// how the batch was chosen in one wording, whoever chose it.
func TestLaunchBatchNote(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch LaunchBatch
		want  string
	}{
		{"recommended, also the best", LaunchBatch{Batch: 2752, Recommended: 2752, Best: 2752},
			"2,752, the recommended batch (the best time and cost; best, the window and cnntime launch without --batch recommend it)"},
		{"recommended, best not known", LaunchBatch{Batch: 176, Recommended: 176},
			"176, the recommended batch (the best time and cost; best, the window and cnntime launch without --batch recommend it)"},
		{"recommended, within 1% of the best", LaunchBatch{Batch: 1120, Recommended: 1120, Best: 1536},
			"1,120, the recommended batch (within 1% of the best time and cost, which batch 1,536 gives; nearest the recipe's batch; best, the window and cnntime launch without --batch recommend it)"},
		{"chosen in the window", LaunchBatch{Batch: 1024, Recommended: 176, Best: 1024, ChosenBy: "chosen in the window"},
			"1,024, chosen in the window (the recommended batch is 176)"},
		{"given with --batch", LaunchBatch{Batch: 3328, ChosenBy: "given with --batch"}, "3,328, given with --batch"},
	} {
		if got := tc.batch.Note(); got != tc.want {
			t.Errorf("%s: %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
