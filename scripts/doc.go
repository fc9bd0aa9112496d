// Package scripts embeds the training script cnntime's launch files start
// (cnntime_train.py), so a SkyPilot task or a Slurm script carries the very script
// whose run cnntime predicted and needs nothing beside it. The other Python files in
// this folder are run from a checkout or the headless bundle and are not embedded.
//
// Imports: nothing of ours (embed only). app/launch reads it.
package scripts
