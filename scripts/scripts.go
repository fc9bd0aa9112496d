package scripts

import _ "embed"

//go:embed cnntime_train.py
var trainScript string

// TrainScriptName is the training script's file name, as launch files write it.
const TrainScriptName = "cnntime_train.py"

// TrainScript is the training script's text.
func TrainScript() string { return trainScript }
