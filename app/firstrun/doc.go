// Package firstrun is `cnntime devices --first-run DIR`: one command that checks a new GPU
// machine end to end and writes one report of it. In order, within a budget of ten
// minutes on one GPU: where the CUDA libraries are (package libfind), the worker's
// self-test, a short sweep of two small CNNs (fp32 and amp, tf32 too where PyTorch's fp32
// runs its convolutions so), scripts/pytorch_sweep.py on the same layers, batch sizes
// and steps when PyTorch with CUDA is there, and `cnntime validate --table steps` — all
// into a cache and a quarantine of its own in DIR, never the user's. The report
// (first-run.json and first-run.txt in DIR) names the GPU, the driver, the CUDA, cuDNN
// and cuBLAS versions and the files loaded, each check's verdict, the worker's layer
// times against PyTorch's, and PyTorch's measured steps against the steps predicted from
// the worker's layers. Without a GPU it writes the report saying why, and the command
// exits 3.
//
// What it asks of the machine (the worker, PyTorch, the PCI bus) goes through Machine, so
// tests run it without a GPU.
//
// Imports: app, app/outfile, db, gpu and its CUDA-free seams, predictor and its sub-packages; no
// CUDA. `cnntime validate --table steps` comes from the command line (Machine.Validate).
package firstrun
