package app

import (
	"context"
	"testing"

	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// ResNet-50 on four p4d.24xlarge over their 400 Gbit/s EFA: 32 GPUs, a throughput
// between 2× and 4× one node's at a quarter of the batch, four times the price.
func TestP4dFourNodesScaleResNet50(t *testing.T) {
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	nets, err := hw.ParseNetworks(assets.CatalogNetworks, eng.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	tg, err := eng.MachineTarget("aws/p4d.24xlarge")
	if err != nil {
		t.Fatal(err)
	}
	net, err := eng.Network("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	link := nets.For(tg.Machine.ID)
	if link.Assumed || link.Fabric != "EFA" || link.Gbps != 400 {
		t.Fatalf("p4d network %+v; want the catalog's EFA 400 Gbit/s", link)
	}
	run := predictor.Run{Epochs: 1, Images: predictor.ImageNetImages}
	one, err := eng.Predictor().Curve(predictor.Request{Network: net, Machine: tg.Machine, GPU: tg.GPU,
		Precision: measure.AMP, Policy: measure.Heuristic, Batches: []int{1024}, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	four, err := eng.Predictor().Curve(predictor.Request{Network: net, Machine: tg.Machine, GPU: tg.GPU,
		Precision: measure.AMP, Policy: measure.Heuristic, Batches: []int{4096}, Run: run, Nodes: 4, NodeNetwork: link})
	if err != nil {
		t.Fatal(err)
	}
	if four.GPUCount != 32 || four.Nodes != 4 || four.Network == nil || four.Network.Gbps != 400 {
		t.Errorf("4 nodes: gpu_count %d, nodes %d, network %+v; want 32, 4, EFA 400", four.GPUCount, four.Nodes, four.Network)
	}
	if one.Nodes != 0 || one.Network != nil || one.GPUCount != 8 {
		t.Errorf("1 node: nodes %d, network %+v, gpu_count %d; want no nodes or network, 8 GPUs", one.Nodes, one.Network, one.GPUCount)
	}
	ratio := four.Points[0].ImagesPerS / one.Points[0].ImagesPerS
	t.Logf("one node %.0f img/s, four nodes %.0f img/s: %.2f×", one.Points[0].ImagesPerS, four.Points[0].ImagesPerS, ratio)
	if !(ratio > 2 && ratio < 4) {
		t.Errorf("4 nodes run %.2f× one node; want between 2× and 4×", ratio)
	}
	if four.PriceUSDPerHour != 4*tg.Machine.PriceUSDPerHour {
		t.Errorf("price %v; want 4 × %v", four.PriceUSDPerHour, tg.Machine.PriceUSDPerHour)
	}
	// Over a slow assumed network the same run scales worse.
	slow, err := eng.Predictor().Curve(predictor.Request{Network: net, Machine: tg.Machine, GPU: tg.GPU,
		Precision: measure.AMP, Policy: measure.Heuristic, Batches: []int{4096}, Run: run, Nodes: 4, NodeNetwork: hw.AssumedNetwork})
	if err != nil {
		t.Fatal(err)
	}
	if !(slow.Points[0].ImagesPerS < four.Points[0].ImagesPerS) {
		t.Errorf("25 Gbit/s Ethernet %.0f img/s, not slower than EFA %.0f", slow.Points[0].ImagesPerS, four.Points[0].ImagesPerS)
	}
}

func TestNodeNetworkFromTheEmbeddedCatalog(t *testing.T) {
	if n := NodeNetwork("aws/p4d.24xlarge"); n.Fabric != "EFA" || n.Gbps != 400 || n.Assumed {
		t.Errorf("p4d: %+v", n)
	}
	if n := NodeNetwork("user/my-box"); !n.Assumed || n.Gbps != hw.AssumedNetwork.Gbps {
		t.Errorf("a user machine: %+v; want the assumed network", n)
	}
}
