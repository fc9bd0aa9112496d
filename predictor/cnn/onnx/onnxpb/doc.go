// Package onnxpb is the Go code protoc-gen-go generates from ONNX's onnx.proto (ONNX 1.12,
// as Debian's libonnx-dev ships it in /usr/include/onnx/onnx.proto; the copy here is
// unchanged). To regenerate it, from this directory:
//
//	apt-get install protobuf-compiler libonnx-dev
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	cp /usr/include/onnx/onnx.proto .
//	protoc --go_out=. --go_opt=paths=source_relative \
//	    --go_opt=Monnx.proto=cnntime/predictor/cnn/onnx/onnxpb onnx.proto
//
// (go generate runs the last command.) Keep protoc-gen-go at the version of
// google.golang.org/protobuf in go.mod.
//
// Imports: google.golang.org/protobuf only.
package onnxpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=cnntime/predictor/cnn/onnx/onnxpb onnx.proto
