package cli

import (
	"context"
	"path/filepath"
	"testing"

	"cnntime/app"
	"cnntime/db"
	"cnntime/predictor/hw"
)

func TestDetectWorkstationKeepsThePriceAcrossDetections(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	det := app.Detection{Method: app.DetectedByWorker, GPUs: []app.LocalGPU{{Name: "Tesla T4", GPUID: "t4"}}}
	if _, _, err := app.SaveWorkstation(ctx, d, det); err != nil {
		t.Fatal(err)
	}
	if _, err := app.SetMachinePrice(ctx, d, hw.WorkstationID, 0.08); err != nil {
		t.Fatal(err)
	}
	det.GPUs = append(det.GPUs, app.LocalGPU{Name: "Tesla T4", GPUID: "t4"})
	if _, _, err := app.SaveWorkstation(ctx, d, det); err != nil {
		t.Fatal(err)
	}
	all, err := app.Machines(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	ws, ok := machineByID(all, hw.WorkstationID)
	if !ok || ws.GPUCount != 2 || ws.PriceUSDPerHour != 0.08 || ws.Instance != "My workstation" || !ws.User {
		t.Errorf("workstation after re-detection = %+v", ws)
	}
}
