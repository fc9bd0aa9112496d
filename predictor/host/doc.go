// Package host models a machine's host: the CPU that runs the DataLoader's workers, how
// many vCPUs it has and what one of its cores does per second. It names CPU families
// (FamilyOf: "Intel Xeon Platinum 8480+" is Sapphire Rapids), gives each family's core
// a speed relative to the loader model's reference core (ReferenceCPU, the Xeon Gold
// 5118 that predictor/pipeline's per-worker rate was fitted on) from cited decode
// measurements, resolves a machine's host from what the catalog knows of it (Resolve)
// and says what was assumed where the catalog names no CPU or no vCPUs: the reference
// core stands in, and the range the unknown host's core may take (AssumedSlowSpeed to
// AssumedFastSpeed) is what the prediction's band widens by.
//
// It does no I/O.
//
// Imports: nothing of ours.
package host
