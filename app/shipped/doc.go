// Package shipped is the hardware catalog cnntime ships (assets/catalog: the GPUs, the
// cloud machines with their on-demand prices, their host CPUs and the spot-price
// snapshot), parsed and validated once. What the cache adds to it (imported prices,
// the user's machines and prices) is app's.
//
// Imports: assets and predictor/hw.
package shipped
