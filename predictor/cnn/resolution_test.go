package cnn

import "testing"

// TestDefaultResolutionIsTorchvisionCrop checks each model's default input size
// against the crop size of torchvision 0.14's default weights
// (get_model_weights(name).DEFAULT.transforms().crop_size).
func TestDefaultResolutionIsTorchvisionCrop(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
	}{
		{"resnet50", 224}, {"inception_v3", 299}, {"mobilenet_v2", 224},
		{"efficientnet_b0", 224}, {"efficientnet_b1", 240}, {"efficientnet_b2", 288},
		{"efficientnet_b3", 300}, {"efficientnet_b4", 380}, {"efficientnet_b5", 456},
		{"efficientnet_b6", 528}, {"efficientnet_b7", 600},
		{"efficientnet_v2_s", 384}, {"efficientnet_v2_m", 480}, {"efficientnet_v2_l", 480},
		{"no_such_model", 0},
	} {
		if got := DefaultResolution(tc.name); got != tc.want {
			t.Errorf("DefaultResolution(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
	net, err := Build("efficientnet_b4", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := net.Layers[0].Config.In.H; got != 380 {
		t.Errorf("efficientnet_b4 built with default options takes a %d-pixel input, want 380", got)
	}
}
