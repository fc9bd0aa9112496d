# cnntime's build. Every target installs what it needs when it is missing, then acts.
#   make run        build and open the desktop app
#   make test       format check, go.mod tidy, vet, every test (the GUI end-to-end test under Xvfb)
#   make headless   cnntime-headless: every command, no window, for servers and clusters
SHELL := /bin/bash
GO    ?= go
VERSION := $(shell sed -n 's/^ *Version *= *"\(.*\)"/\1/p' FyneApp.toml)
LDFLAGS := -X cnntime/app.Version=$(VERSION)
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_ENV := DEBIAN_FRONTEND=noninteractive

# Debian packages Fyne needs to build (OpenGL, X11, Wayland headers) and the ones the
# GUI end-to-end tests need (a virtual X server and xdotool to move the mouse and type;
# they read the screen themselves, with the X protocol's GetImage),
# PyTorch with torchvision for /usr/bin/python3 (the zoo's parity test against torchvision),
# g++ (gpu/cudakern's tests compile the CUDA worker's kernels for a CPU emulator), and zsh
# and fish (the shell completion scripts are run in each shell; bash is always there).
FYNE_DEBS := gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev \
	libxinerama-dev libxi-dev libxxf86vm-dev libxkbcommon-dev libwayland-dev
TEST_DEBS := xvfb xdotool python3-torch python3-torchvision g++ zsh fish

define install_debs
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:" $$missing; \
		$(SUDO) $(APT_ENV) apt-get update -qq && $(SUDO) $(APT_ENV) apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

.PHONY: run build headless deps test-deps test vet fmt-check tidy-check test-go cgo-free package clean gpu-worker test-cluster container

build: deps
	$(GO) build -ldflags "$(LDFLAGS)" -o cnntime .

# The headless build for GPU servers, Slurm nodes and containers: the same commands, no
# window, no graphics library (no Fyne, no cgo: a static binary). With no command it says
# to use the desktop build.
headless:
	CGO_ENABLED=0 $(GO) build -tags headless -ldflags "$(LDFLAGS)" -o cnntime-headless .

run: build
	./cnntime

deps:
	$(call install_debs,$(FYNE_DEBS))

test-deps: deps
	$(call install_debs,$(TEST_DEBS))

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

# go.mod and go.sum are what 'go mod tidy' makes them: every dependency the code imports
# required as direct, nothing unused. -diff changes no file; it prints what tidy would
# change and fails. (It reads the module cache, downloading from the Go module proxy only
# what is missing there, as a build does.)
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run 'go mod tidy' and commit the result"; exit 1; }

vet: deps
	$(GO) vet -tags ci ./...
	$(GO) vet -tags ci,clockahead ./app

# Everything but the GUI (views) and main must build without cgo.
cgo-free:
	CGO_ENABLED=0 $(GO) build $$($(GO) list ./... | grep -v -e '^cnntime$$' -e '^cnntime/views')

# The tests never read or write the user's own cache: CNNTIME_DB names a scratch file
# (a cache left by another cnntime build, of a newer schema, would fail them).
# GOTRACEBACK=all: a panic prints every goroutine, so a rare one shows who else ran.
# clockahead: the app's clock runs a year ahead of the wall clock (app/clock/ahead.go),
# so a test whose expected output depends on today's date without pinning the day with
# app.SetClock fails the day it is written, not months later on a fresh clone.
test-go: test-deps
	scratch=$$(mktemp -d) && trap 'rm -rf "$$scratch"' EXIT && \
		CNNTIME_DB="$$scratch/default-cache.db" GOTRACEBACK=all $(GO) test -tags ci,clockahead -count=1 -timeout 45m ./...

test: fmt-check tidy-check vet cgo-free test-go

# Sweeps on a Slurm cluster, end to end: a one-node cluster (munged, slurmctld, slurmd) on
# this machine runs the script `cnntime cluster slurm` writes, then a cancelled and
# requeued task resumes; then a training job `cnntime launch slurm` writes trains on this
# CPU with Debian's PyTorch and its measured step imports. slurm-wlm and munge are
# installed when missing, and PyTorch for /usr/bin/python3. Needs root.
test-cluster: headless
	$(call install_debs,python3-torch python3-torchvision python3-pil)
	$(SUDO) env "PATH=$$PATH" CNNTIME="$(CURDIR)/cnntime-headless" bash scripts/test_cluster.sh

# A desktop bundle: cnntime.tar.xz with the binary, a .desktop entry and the icon; and
# beside it cnntime-headless.tar.xz for servers: the headless binary and the PyTorch scripts.
package: deps headless
	$(GO) tool fyne package --target linux --release
	tar -cJf cnntime-headless.tar.xz cnntime-headless scripts/pytorch_sweep.py scripts/dataloader_rate.py scripts/cnntime_train.py
	@ls -l cnntime.tar.xz cnntime-headless.tar.xz

clean:
	rm -f cnntime cnntime-gpu cnntime-headless cnntime.tar.xz cnntime-headless.tar.xz

# The container image for Kubernetes and GPU servers (Containerfile): the headless cnntime,
# cnntime-gpu and the scripts on NVIDIA's CUDA runtime image with cuDNN, tagged $(IMAGE).
# Needs podman, or docker with a running engine; go test ./app/cluster lints the
# Containerfile where neither is.
IMAGE ?= cnntime:$(VERSION)
container:
	@if command -v podman >/dev/null 2>&1; then b=podman; \
	elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then b=docker; \
	else echo "make container: no container builder here: install podman, or docker with a running engine (the Containerfile is linted by go test ./app/cluster)"; exit 1; fi; \
	echo "$$b build -f Containerfile --build-arg VERSION=$(VERSION) -t $(IMAGE) ."; \
	$$b build -f Containerfile --build-arg VERSION=$(VERSION) -t $(IMAGE) .

# The CUDA sweep worker, a separate binary (gorgonia.org/cu exits the process when no GPU
# is present, so it is never linked into cnntime). Building needs cuda.h and libcuda: from
# an NVIDIA install under $(CUDA_HOME) (/usr/local/cuda), else Debian's nvidia-cuda-dev
# from the non-free component, enabled here when missing.
# cuDNN, cuBLAS and NVRTC are loaded at run time, so they are not needed to build; recommends
# (the kernel module, built by DKMS) are left out: the machine that runs the worker has its driver.
DEBIAN_SOURCES := /etc/apt/sources.list.d/debian.sources
CUDA_HOME ?= /usr/local/cuda
# Where cuda.h may already be: Debian's nvidia-cuda-dev puts it in /usr/include.
CUDA_INCLUDE ?= /usr/include
# The host's identity: only Debian gets Debian's nvidia-cuda-dev installed. Elsewhere (Ubuntu,
# RHEL, ...) the package would be wrong or pull a libcuda that fights the driver, so the
# target says what to install and stops.
OS_RELEASE ?= /etc/os-release
gpu-worker:
	@if [ ! -f $(CUDA_INCLUDE)/cuda.h ] && [ ! -f $(CUDA_HOME)/include/cuda.h ]; then \
		id=$$(. $(OS_RELEASE) 2>/dev/null && echo "$$ID"); \
		if [ "$$id" != debian ]; then \
			echo "cuda.h not found (in $(CUDA_INCLUDE) or $(CUDA_HOME)/include): this host is $${id:-unknown}, not Debian, so nothing is installed." >&2; \
			echo "Install the CUDA toolkit's headers (NVIDIA's cuda-toolkit package for your distribution, or the" >&2; \
			echo "CUDA installer; keep the driver you have) and run make gpu-worker again, with CUDA_HOME=DIR if" >&2; \
			echo "they are not in /usr/local/cuda." >&2; \
			exit 1; \
		fi; \
		if [ -f $(DEBIAN_SOURCES) ] && ! grep -q '^Components:.*non-free' $(DEBIAN_SOURCES); then \
			echo "enabling Debian's non-free components for nvidia-cuda-dev"; \
			$(SUDO) sed -i 's/^Components: main$$/Components: main contrib non-free non-free-firmware/' $(DEBIAN_SOURCES); \
		fi; \
		echo "installing Debian package: nvidia-cuda-dev"; \
		$(SUDO) $(APT_ENV) apt-get update -qq && $(SUDO) $(APT_ENV) apt-get install -y -qq --no-install-recommends nvidia-cuda-dev >/dev/null; \
	fi
	CGO_ENABLED=1 CGO_CFLAGS="$$CGO_CFLAGS -I$(CUDA_HOME)/include" CGO_LDFLAGS="$$CGO_LDFLAGS -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs" \
		$(GO) build -tags cuda -o cnntime-gpu ./gpu/cmd/cnntime-gpu
