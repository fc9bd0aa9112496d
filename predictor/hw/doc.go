// Package hw describes the hardware that training runs on: GPU specifications and
// machines (cloud instances and the user's own), and loads and validates the catalog
// of both from CSV bytes. It does no I/O of its own; callers pass the files' contents.
//
// Prices: it reads SkyPilot's price catalog (ParseSkyPilotCatalog), maps its accelerator
// names onto GPU ids through one table (AcceleratorRules), joins the offers with the
// catalog's machines (Catalog.WithOffers) and prices a machine in a region, on-demand
// or spot (Machine.Priced), with the price's age as of a day the caller gives (Aged).
//
// A numeric specification of zero means unknown: the public sources did not give it.
// Code that reads a GPU must cope with unknown figures, never assume a value.
//
// A machine's host CPU is a predictor/host.CPU; the CPU file (ParseCPUs) names it.
//
// Imports: predictor/host.
package hw
