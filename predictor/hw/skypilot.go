package hw

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// SkyPilot's price catalog (github.com/skypilot-org/skypilot-catalog, Apache-2.0): one
// vms.csv per cloud under catalogs/v7/<cloud>/, refreshed by SkyPilot's own jobs and
// cached on every SkyPilot user's machine under ~/.sky/catalogs/v7/. Schema v5 and later
// have the columns below; their order differs from cloud to cloud, so they are found by
// name. Other columns (GpuInfo, Arch, Generation) are allowed and ignored.

// SkyPilotLayout is the catalog version whose files cnntime reads.
const SkyPilotLayout = "v7"

// SkyPilotFile is the name of a cloud's file in the catalog.
const SkyPilotFile = "vms.csv"

// skyPilotColumns must all be in a vms.csv header; skyPilotZone may be.
var skyPilotColumns = []string{"InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB",
	"Region", "Price", "SpotPrice"}

const skyPilotZone = "AvailabilityZone"

// CloudOffer is one instance type of a cloud in one region, from a SkyPilot catalog:
// its accelerator as SkyPilot names it, its size, and its on-demand and spot prices in
// US dollars per hour (0: the catalog gives none). Zones of a region are folded into
// the region: the spot price is the cheapest zone's, named in SpotZone.
type CloudOffer struct {
	Cloud            string  `json:"cloud"`
	Instance         string  `json:"instance"`
	Region           string  `json:"region"`
	Accelerator      string  `json:"accelerator"`
	AcceleratorCount float64 `json:"accelerator_count"`
	VCPUs            float64 `json:"vcpus"`
	MemoryGiB        float64 `json:"memory_gib"`
	PriceUSD         float64 `json:"price_usd_per_hour"`
	SpotUSD          float64 `json:"spot_usd_per_hour"`
	SpotZone         string  `json:"spot_zone,omitempty"`
}

// SkyPilotCatalog is one cloud's vms.csv, read: every offer with an accelerator (CPU-only
// instance types are counted, not kept).
type SkyPilotCatalog struct {
	Cloud   string
	Offers  []CloudOffer // by instance, then region
	Rows    int          // data rows in the file
	CPUOnly int          // rows of instance types without an accelerator
}

// reservedProviders may not be a cloud's name: they are cnntime's own machines.
var reservedProviders = map[string]bool{UserProvider: true, LocalProvider: true, BareGPUProvider: true}

// CheckCloudName accepts a cloud name as the catalog's directories spell it (aws, gcp,
// lambda): lower-case letters, digits and '-', none of cnntime's own providers.
func CheckCloudName(cloud string) error {
	if !providerPattern.MatchString(cloud) {
		return fmt.Errorf("%q is not a cloud name such as aws or lambda (lower-case letters, digits and '-')", cloud)
	}
	if reservedProviders[cloud] {
		return fmt.Errorf("%q is cnntime's own provider name, not a cloud's", cloud)
	}
	return nil
}

// MaxNameBytes bounds a name a price catalog or a cache gives (an instance type, a
// region, an accelerator): the longest real ones are a few dozen bytes.
const MaxNameBytes = 128

// CheckName accepts a name from a catalog or a cache — an instance type, a region, an
// accelerator — as text to show, quote and write into job files: valid UTF-8 of at most
// MaxNameBytes, without control characters (a line break, ESC, BEL, DEL, the C1
// controls), Unicode's line and paragraph separators or its bidirectional overrides.
func CheckName(s string) error {
	if len(s) > MaxNameBytes {
		return fmt.Errorf("%q… is %d bytes long, more than a name may be (%d)", s[:32], len(s), MaxNameBytes)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%q is not UTF-8 text", s)
	}
	for _, r := range s {
		if Unprintable(r) {
			return fmt.Errorf("%q holds the control character %U: a name must be printable text", s, r)
		}
	}
	return nil
}

// Unprintable reports whether r is a character a terminal, a YAML loader or a shell
// script acts on rather than shows: a control character (C0, DEL, C1), a line or
// paragraph separator, or a bidirectional override or isolate.
func Unprintable(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028, r == 0x2029, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// ParseSkyPilotCatalog reads one cloud's vms.csv (name is the file or address, for the
// errors). It refuses, naming the line and column, anything that is not a whole
// SkyPilot catalog: a header without the catalog's columns, a row whose cell count
// differs from the header's, a price or size that is not a finite number of zero or
// more, a row without an instance type or region, a file with no rows, and a file that
// ends in the middle of a row (cut short). GCP sells GPUs attached to a host VM: its
// GPU rows become offers of the VM with the GPUs (GCPHostFor).
func ParseSkyPilotCatalog(cloud, name string, data []byte) (*SkyPilotCatalog, error) {
	if err := CheckCloudName(cloud); err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, &RowError{File: name, Line: 1, Field: "header", Msg: "the file is empty; a SkyPilot catalog starts with a header naming " + strings.Join(skyPilotColumns, ", ")}
	}
	if data[len(data)-1] != '\n' {
		return nil, &RowError{File: name, Line: bytes.Count(data, []byte{'\n'}) + 1, Field: "row",
			Msg: "the file ends in the middle of a row: it looks cut short (a download or copy that did not finish); fetch it again"}
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = 0
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, notSkyPilot(name, csvError(name, err))
	}
	t := &table{file: name, col: map[string]int{}}
	for i, h := range header {
		t.col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	var missing []string
	for _, c := range skyPilotColumns {
		if _, ok := t.col[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, &RowError{File: name, Line: 1, Field: "header",
			Msg: fmt.Sprintf("not a SkyPilot catalog (catalogs/%s/<cloud>/%s): the header lacks %s", SkyPilotLayout, SkyPilotFile, strings.Join(missing, ", "))}
	}
	_, hasZone := t.col[skyPilotZone]
	cat := &SkyPilotCatalog{Cloud: cloud}
	type key struct{ instance, region string }
	offers := map[key]*CloudOffer{}
	types := map[string]bool{}
	var gcpGPUs, gcpVMs []skyRow
	for {
		fields, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := r.FieldPos(0)
		rec := record{t: t, line: line, fields: fields}
		if cat.Rows == MaxCatalogRows {
			return nil, rec.errorf("row", "%s", tooLarge("rows", MaxCatalogRows, "about 40,000"))
		}
		row, err := readSkyRow(rec, hasZone)
		if err != nil {
			return nil, err
		}
		cat.Rows++
		if cloud == "gcp" {
			switch {
			case row.accelerator != "" && row.instance == "":
				gcpGPUs = append(gcpGPUs, row)
				continue
			case row.accelerator == "":
				gcpVMs = append(gcpVMs, row)
			}
		}
		if row.accelerator == "" {
			cat.CPUOnly++
			continue
		}
		if row.instance == "" {
			return nil, rec.errorf("InstanceType", "is empty for accelerator %q; only GCP lists GPUs without the VM they attach to", row.accelerator)
		}
		k := key{row.instance, row.region}
		o := offers[k]
		if o == nil {
			if err := checkVolume(len(offers)+1, len(types)+boolInt(!types[row.instance])); err != "" {
				return nil, rec.errorf("row", "%s", err)
			}
			o = &CloudOffer{Cloud: cloud, Instance: row.instance, Region: row.region, Accelerator: row.accelerator,
				AcceleratorCount: row.count, VCPUs: row.vcpus, MemoryGiB: row.memory}
			offers[k] = o
			types[row.instance] = true
		}
		o.fold(row.price, row.spot, row.zone)
	}
	if cat.Rows == 0 {
		return nil, &RowError{File: name, Line: 2, Field: "row", Msg: "the catalog has a header but no rows: it looks cut short or empty; fetch it again"}
	}
	for _, o := range composeGCP(gcpGPUs, gcpVMs) {
		k := key{o.Instance, o.Region}
		if prev := offers[k]; prev != nil {
			prev.fold(o.PriceUSD, o.SpotUSD, o.SpotZone)
			continue
		}
		if err := checkVolume(len(offers)+1, len(types)+boolInt(!types[o.Instance])); err != "" {
			return nil, &RowError{File: name, Line: cat.Rows + 1, Field: "row", Msg: err + " (GCP's GPUs on their VMs)"}
		}
		offers[k] = &o
		types[o.Instance] = true
	}
	for _, o := range offers {
		cat.Offers = append(cat.Offers, *o)
	}
	sort.Slice(cat.Offers, func(i, j int) bool {
		a, b := cat.Offers[i], cat.Offers[j]
		if a.Instance != b.Instance {
			return a.Instance < b.Instance
		}
		return a.Region < b.Region
	})
	return cat, nil
}

// notSkyPilot says that a file whose first line is not CSV is no catalog.
func notSkyPilot(name string, err error) error {
	var re *RowError
	if errors.As(err, &re) {
		re.Msg = "not a SkyPilot catalog: " + re.Msg
		return re
	}
	return fmt.Errorf("%s is not a SkyPilot catalog: %w", name, err)
}

// fold adds one zone's prices to o: the region's on-demand price (the same in every
// zone; the lowest is kept) and the cheapest zone's spot price.
func (o *CloudOffer) fold(price, spot float64, zone string) {
	if price > 0 && (o.PriceUSD == 0 || price < o.PriceUSD) {
		o.PriceUSD = price
	}
	if spot > 0 && (o.SpotUSD == 0 || spot < o.SpotUSD) {
		o.SpotUSD, o.SpotZone = spot, zone
	}
}

// skyRow is one checked row of a vms.csv.
type skyRow struct {
	instance, accelerator, region, zone string
	count, vcpus, memory, price, spot   float64
}

// checkVolume says what is wrong when a cloud's catalog would hold offers instance
// types × regions of types instance types with an accelerator: more than
// MaxCloudOffers or MaxCloudInstanceTypes ("" when neither).
func checkVolume(offers, types int) string {
	switch {
	case types > MaxCloudInstanceTypes:
		return tooLarge("instance types with an accelerator", MaxCloudInstanceTypes, "a few hundred")
	case offers > MaxCloudOffers:
		return tooLarge("instance types × regions with an accelerator", MaxCloudOffers, "about 2,000")
	}
	return ""
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func readSkyRow(rec record, hasZone bool) (skyRow, error) {
	row := skyRow{instance: rec.text("InstanceType"), accelerator: rec.text("AcceleratorName")}
	var err error
	if row.region, err = rec.required("Region"); err != nil {
		return row, err
	}
	if hasZone {
		row.zone = rec.text(skyPilotZone)
	}
	for _, f := range []struct{ col, v string }{{"InstanceType", row.instance}, {"AcceleratorName", row.accelerator},
		{"Region", row.region}, {skyPilotZone, row.zone}} {
		if err := CheckName(f.v); err != nil {
			return row, rec.errorf(f.col, "%s", err)
		}
	}
	for _, f := range []struct {
		col string
		dst *float64
	}{{"AcceleratorCount", &row.count}, {"vCPUs", &row.vcpus}, {"MemoryGiB", &row.memory},
		{"Price", &row.price}, {"SpotPrice", &row.spot}} {
		if *f.dst, err = rec.number(f.col); err != nil {
			return row, err
		}
	}
	if row.instance == "" && row.accelerator == "" {
		return row, rec.errorf("InstanceType", "is empty, and so is AcceleratorName: the row names nothing")
	}
	if row.accelerator != "" && !(row.count > 0) {
		return row, rec.errorf("AcceleratorCount", "%q: an instance with accelerator %q needs a count above 0", rec.text("AcceleratorCount"), row.accelerator)
	}
	err = CheckOffer(CloudOffer{AcceleratorCount: row.count, VCPUs: row.vcpus, MemoryGiB: row.memory, PriceUSD: row.price, SpotUSD: row.spot})
	var oe *OfferError
	if errors.As(err, &oe) {
		return row, rec.errorf(oe.Field, "%s", oe.Msg)
	}
	return row, err
}

// GCP attaches most GPUs to a VM of its own choosing, and SkyPilot's GCP catalog lists
// such GPUs (InstanceType empty, the GPUs' price only) apart from the VMs (no
// accelerator, the VM's price only). gcpHosts is the VM each GPU count comes with:
// the A2, A3 and G2 machine types that include them, as GCP sells them.
var gcpHosts = map[string]map[int]string{
	"A100":      {1: "a2-highgpu-1g", 2: "a2-highgpu-2g", 4: "a2-highgpu-4g", 8: "a2-highgpu-8g", 16: "a2-megagpu-16g"},
	"A100-80GB": {1: "a2-ultragpu-1g", 2: "a2-ultragpu-2g", 4: "a2-ultragpu-4g", 8: "a2-ultragpu-8g"},
	"H100":      {1: "a3-highgpu-1g", 2: "a3-highgpu-2g", 4: "a3-highgpu-4g", 8: "a3-highgpu-8g"},
	"H100-MEGA": {8: "a3-megagpu-8g"},
	"H200":      {8: "a3-ultragpu-8g"},
	"B200":      {8: "a4-highgpu-8g"},
	"GB200":     {4: "a4x-highgpu-4g"},
	"L4":        {1: "g2-standard-4", 2: "g2-standard-24", 4: "g2-standard-48", 8: "g2-standard-96"},
}

// gcpPricedByGPUs are the hosts whose whole price SkyPilot's GCP catalog puts on the
// GPUs' row, listing the VM itself at $0.0 (catalogs/v8/gcp/vms.csv: a4-highgpu-8g 0.0,
// its B200 × 8 at $64.44–90.216/h): their offer is the GPUs' price alone. Any other host
// at $0 has no known price, and neither has its offer.
var gcpPricedByGPUs = map[string]bool{"a4-highgpu-8g": true, "a4x-highgpu-4g": true}

// gcpN1GPUs attach to an N1 VM the user chooses; cnntime prices them with 4 vCPUs
// per GPU (n1-standard-4 for one, n1-standard-32 for eight), as its own catalog does.
var gcpN1GPUs = map[string]bool{"K80": true, "P4": true, "P100": true, "T4": true, "V100": true}

// GCPHostFor is the VM that count GCP GPUs of the SkyPilot accelerator come on, and the
// instance name cnntime gives the pair ("a2-highgpu-1g"; "n1-standard-4-1x-nvidia-tesla-v100"
// for GPUs attached to an N1 VM). ok is false for an accelerator or count GCP does not
// sell on a VM (TPUs).
func GCPHostFor(accelerator string, count int) (host, instance string, ok bool) {
	if byCount, known := gcpHosts[accelerator]; known {
		host, ok = byCount[count]
		return host, host, ok
	}
	if gcpN1GPUs[accelerator] && count >= 1 && count <= 8 && count&(count-1) == 0 {
		host = fmt.Sprintf("n1-standard-%d", 4*count)
		return host, fmt.Sprintf("%s-%dx-nvidia-tesla-%s", host, count, strings.ToLower(accelerator)), true
	}
	return "", "", false
}

// composeGCP pairs GCP's GPU rows with their host VM in the same zone (else region):
// one offer per instance and region whose price is the VM's plus the GPUs' (and the
// spot price likewise, where both have one). GPUs without a host (TPUs) are offers of
// their own, named by the accelerator, with their own price, for the record.
func composeGCP(gpus, vms []skyRow) []CloudOffer {
	type vmKey struct{ instance, where string }
	vm := map[vmKey]skyRow{}
	for _, r := range vms {
		vm[vmKey{r.instance, r.zone}] = r
		if _, seen := vm[vmKey{r.instance, "region:" + r.region}]; !seen {
			vm[vmKey{r.instance, "region:" + r.region}] = r
		}
	}
	var out []CloudOffer
	for _, g := range gpus {
		n := int(g.count)
		host, instance, ok := GCPHostFor(g.accelerator, n)
		if !ok || float64(n) != g.count {
			out = append(out, CloudOffer{Cloud: "gcp", Instance: g.accelerator, Region: g.region, Accelerator: g.accelerator,
				AcceleratorCount: g.count, PriceUSD: g.price, SpotUSD: g.spot, SpotZone: zoneIf(g.spot, g.zone)})
			continue
		}
		h, found := vm[vmKey{host, g.zone}]
		if !found || g.zone == "" {
			if h, found = vm[vmKey{host, "region:" + g.region}]; !found {
				continue // the host VM is not sold where the GPU is: no offer
			}
		}
		o := CloudOffer{Cloud: "gcp", Instance: instance, Region: g.region, Accelerator: g.accelerator,
			AcceleratorCount: g.count, VCPUs: h.vcpus, MemoryGiB: h.memory}
		byGPUs := gcpPricedByGPUs[host]
		if g.price > 0 && (h.price > 0 || byGPUs) {
			o.PriceUSD = roundCents(g.price + h.price)
		}
		if g.spot > 0 && (h.spot > 0 || byGPUs) {
			o.SpotUSD, o.SpotZone = roundCents(g.spot+h.spot), g.zone
		}
		out = append(out, o)
	}
	return out
}

func zoneIf(price float64, zone string) string {
	if price > 0 {
		return zone
	}
	return ""
}

// roundCents rounds a sum of prices to a hundredth of a cent, as SkyPilot rounds them.
func roundCents(x float64) float64 { return math.Round(x*1e5) / 1e5 }

// AcceleratorRule maps a SkyPilot accelerator name to a cnntime GPU id: on Cloud (any
// when empty), for instance types matching Instance (any when empty). GPU "" says the
// accelerator is known and has no performance data in cnntime (Why says which part it is).
type AcceleratorRule struct {
	Cloud       string
	Accelerator string
	Instance    string // a regular expression on the instance type
	GPU         string
	Why         string
}

// AcceleratorRules is THE table from SkyPilot's accelerator names to cnntime's GPU ids,
// tried in order (the first rule that matches decides). An accelerator no rule names
// has no performance data in cnntime: it is listed as such, never guessed.
//
// SkyPilot names a GPU by its chip and memory, not its form factor; where one name
// covers two of cnntime's GPUs the cloud and instance type tell them apart (sources:
// SkyPilot's data fetchers sky/catalog/data_fetchers/fetch_{aws,azure,gcp,lambda_cloud,
// runpod}.py, and the clouds' instance documentation).
var AcceleratorRules = []AcceleratorRule{
	{Accelerator: "K80", GPU: "k80"},
	{Accelerator: "P100", GPU: "p100-pcie-16gb"},
	{Accelerator: "V100", GPU: "v100-sxm2-16gb", Why: "AWS p3, GCP and Lambda sell the SXM2 V100; Azure NCv3's PCIe V100 is modelled as the SXM2 part, as cnntime's own catalog does"},
	{Accelerator: "V100-SXM2", GPU: "v100-sxm2-16gb"},
	{Accelerator: "V100-32GB", GPU: "v100-sxm2-32gb"},
	{Accelerator: "V100-SXM2-32GB", GPU: "v100-sxm2-32gb"},
	{Accelerator: "T4", GPU: "t4"},
	{Accelerator: "A10G", GPU: "a10g"},
	{Accelerator: "A10", GPU: "a10"},
	{Accelerator: "L4", GPU: "l4"},
	{Accelerator: "L40S", GPU: "l40s"},
	{Cloud: "lambda", Accelerator: "A100", Instance: `(_sxm4$|^gpu_8x_a100$)`, GPU: "a100-sxm4-40gb"},
	{Cloud: "lambda", Accelerator: "A100", Why: "Lambda's gpu_Nx_a100 without _sxm4 is the A100 PCIe 40GB, which cnntime's GPU catalog lacks"},
	{Accelerator: "A100", GPU: "a100-sxm4-40gb", Why: "AWS p4d, GCP a2-highgpu and Azure ND A100 v4 are A100 SXM4 40GB"},
	{Cloud: "azure", Accelerator: "A100-80GB", Instance: `^Standard_NC`, GPU: "a100-pcie-80gb", Why: "Azure NC A100 v4 is the PCIe part"},
	{Cloud: "runpod", Accelerator: "A100-80GB", GPU: "a100-pcie-80gb", Why: "RunPod's A100-80GB is its 'A100 PCIe' (fetch_runpod.py renames it)"},
	{Accelerator: "A100-80GB", GPU: "a100-sxm4-80gb", Why: "AWS p4de, GCP a2-ultragpu, Azure ND A100 v4 (amsr) and Lambda are SXM4"},
	{Accelerator: "A100-80GB-SXM", GPU: "a100-sxm4-80gb"},
	{Cloud: "lambda", Accelerator: "H100", Instance: `pcie`, GPU: "h100-pcie"},
	{Cloud: "runpod", Accelerator: "H100", GPU: "h100-pcie", Why: "RunPod's H100 is its 'H100 PCIe' (fetch_runpod.py renames it)"},
	{Cloud: "azure", Accelerator: "H100", Instance: `^Standard_NCC?[0-9]`, GPU: "h100-nvl", Why: "Azure NC H100 v5 and NCC H100 v5 carry the H100 NVL 94GB"},
	{Accelerator: "H100", GPU: "h100-sxm", Why: "AWS p5, GCP a3-highgpu, Azure ND H100 v5 and Lambda sxm5 are SXM5"},
	{Accelerator: "H100-SXM", GPU: "h100-sxm"},
	{Accelerator: "H100-MEGA", GPU: "h100-sxm", Why: "GCP a3-megagpu: H100 SXM with more network"},
	{Accelerator: "H100-NVL", GPU: "h100-nvl"},
	{Accelerator: "H200", GPU: "h200"},
	{Accelerator: "H200-SXM", GPU: "h200"},
	{Accelerator: "GH200", GPU: "gh200"},
	{Accelerator: "B200", GPU: "b200", Why: "AWS p6-b200, GCP a4-highgpu and Lambda sell the HGX B200 part"},
	{Accelerator: "GB200", GPU: "gb200"},
	{Accelerator: "B300", GPU: "b300", Why: "AWS p6-b300 sells the HGX B300 part"},
	{Accelerator: "GB300", GPU: "gb300"},
	{Accelerator: "A6000", GPU: "rtx-a6000"},
	{Accelerator: "RTXA6000", GPU: "rtx-a6000"},
	{Accelerator: "RTX4090", GPU: "rtx-4090"},
	{Accelerator: "RTX3090", GPU: "rtx-3090"},
	{Accelerator: "RTX5090", GPU: "rtx-5090"},
	{Accelerator: "RTX5080", GPU: "rtx-5080"},
	{Accelerator: "RTX6000-Ada", GPU: "rtx-6000-ada"},
	{Accelerator: "L40", GPU: "l40"},
	{Accelerator: "A40", GPU: "a40"},
}

var ruleInstance = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(AcceleratorRules))
	for i, r := range AcceleratorRules {
		if r.Instance != "" {
			out[i] = regexp.MustCompile(r.Instance)
		}
	}
	return out
}()

// GPUForOffer is the cnntime GPU of an offer through AcceleratorRules, and the GPU count
// as a whole number. ok is false, with why, when cnntime has no performance data for
// it: an accelerator no rule knows, one a rule names without a GPU, or a fraction of a
// GPU (Azure's NV A10 v5, AWS's g6f).
func GPUForOffer(o CloudOffer) (gpu string, count int, why string, ok bool) {
	if o.AcceleratorCount != math.Trunc(o.AcceleratorCount) || o.AcceleratorCount < 1 {
		return "", 0, fmt.Sprintf("%g of a GPU: cnntime predicts whole GPUs", o.AcceleratorCount), false
	}
	for i, r := range AcceleratorRules {
		if !strings.EqualFold(r.Accelerator, o.Accelerator) || (r.Cloud != "" && r.Cloud != o.Cloud) {
			continue
		}
		if re := ruleInstance[i]; re != nil && !re.MatchString(o.Instance) {
			continue
		}
		if r.GPU == "" {
			return "", 0, "no performance data: " + r.Why, false
		}
		return r.GPU, int(o.AcceleratorCount), "", true
	}
	return "", 0, fmt.Sprintf("no performance data: cnntime's GPU catalog has no %q", o.Accelerator), false
}

// PredictableAccelerators are the SkyPilot accelerator names some rule of
// AcceleratorRules maps onto a cnntime GPU: the only offers that can become machines.
func PredictableAccelerators() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range AcceleratorRules {
		if name := strings.ToLower(r.Accelerator); r.GPU != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// OfferMachineID is the machine id of a cloud's instance type: "cloud/instance", the
// instance's characters other than letters, digits, '.', '_' and '-' replaced by '-'.
func OfferMachineID(cloud, instance string) string {
	return cloud + "/" + strings.Trim(offerIDChars.ReplaceAllString(instance, "-"), "-")
}

var offerIDChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
