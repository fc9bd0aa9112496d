package views

import "testing"

func TestProviderTitles(t *testing.T) {
	for _, c := range []struct{ provider, want string }{
		{"aws", "AWS"}, {"gcp", "GCP"}, {"azure", "Azure"}, {"lambda", "Lambda"}, {"runpod", "RunPod"},
		{"coreweave", "CoreWeave"}, {"CoreWeave", "CoreWeave"}, {"vultr", "vultr"},
	} {
		if got := providerTitle(c.provider); got != c.want {
			t.Errorf("providerTitle(%q) = %q, want %q", c.provider, got, c.want)
		}
	}
}
