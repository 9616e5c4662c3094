# JackAudioSession: every step installs what it needs itself (idempotent).
#   make run    install, build, run `jas selftest` on a private jackd
#   make test   install, build, run the whole suite (includes `make rtsan`)
#   make rtsan  the loopback test with RealtimeSanitizer inside the callback
#   make bench  callback cost against a C reference client (not part of test)

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
SWIFT ?= swift
# sox: the tests open recordings with it too; pyloudnorm (PyPI): the second loudness implementation the tests compare with.
APT_PACKAGES := jackd2 libjack-jackd2-dev libsndfile1-dev libebur128-dev sox
PIP_PACKAGES := pyloudnorm
# The toolchain's clang ships RealtimeSanitizer's runtime.
CLANG := $(dir $(realpath $(shell command -v $(SWIFT))))clang
RTSAN_RUNTIME = $(shell $(CLANG) -print-resource-dir)/lib/linux/libclang_rt.rtsan-x86_64.a
RTSAN_LINK = -Xlinker --whole-archive -Xlinker $(RTSAN_RUNTIME) -Xlinker --no-whole-archive -Xlinker --export-dynamic
RTSAN_PIDS := .build-rtsan/servers
export JACK_NO_AUDIO_RESERVATION := 1

.PHONY: deps build run test rtsan bench soak clean

deps:
	@missing=""; \
	for package in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@for package in $(PIP_PACKAGES); do \
	  python3 -c "import $$package" 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check $$package; \
	done

build: deps
	$(SWIFT) build

run: build
	$(SWIFT) run --skip-build jas selftest

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) rtsan

rtsan: deps
	$(SWIFT) build --build-tests --scratch-path .build-rtsan $(RTSAN_LINK)
	# 1. The measurement loopback, the latency probe, the multiRoute player and the recorder run with the sanitizer watching the callback.
	$(SWIFT) test --skip-build --scratch-path .build-rtsan \
	  --filter 'LoopbackBitExactTests.testTenSecondsBitExactAtPeriod64|RealtimeSafetyTests.testLatencyProbeAllocatesNothingWhileMeasuring|RealtimeSafetyTests.testMultiroutePlayerAllocatesNothing|RecordRealtimeTests'
	# 2. The canary: a callback that allocates must be stopped by the sanitizer.
	mkdir -p $(RTSAN_PIDS)
	if JAS_SERVER_PID_DIR=$(RTSAN_PIDS) $(SWIFT) test --skip-build --scratch-path .build-rtsan \
	     --filter 'RealtimeSafetyTests.testCounterSeesAnAllocatingCallback' > .build-rtsan/canary.log 2>&1; then \
	  echo "rtsan: the allocating callback was NOT caught"; status=1; \
	elif grep -q 'ERROR: RealtimeSanitizer' .build-rtsan/canary.log; then \
	  echo "rtsan: the allocating callback was caught, as it must be"; status=0; \
	else \
	  cat .build-rtsan/canary.log; echo "rtsan: the canary failed for another reason"; status=1; \
	fi; \
	for file in $(RTSAN_PIDS)/*.pid; do [ -e "$$file" ] && kill "$$(cat "$$file")" 2>/dev/null; rm -f "$$file"; done; \
	exit $$status

bench: deps
	mkdir -p Benchmarks/bin
	cc -O2 -Wall -IBenchmarks/CReference/include -o Benchmarks/bin/c-passthrough \
	  Benchmarks/CReference/main.c Benchmarks/CReference/passthrough.c -ljack
	$(SWIFT) build -c release --product callback-bench
	$(SWIFT) build -c release --product jas
	.build/release/callback-bench --c-reference Benchmarks/bin/c-passthrough
	$(SWIFT) build -c release --product recovery-bench
	timeout 600 .build/release/recovery-bench
	$(MAKE) deps APT_PACKAGES=jack-delay PIP_PACKAGES=
	$(SWIFT) build -c release --product latency-bench
	timeout 600 .build/release/latency-bench
	$(MAKE) deps APT_PACKAGES=jack-capture PIP_PACKAGES=
	$(SWIFT) build -c release --product record-bench
	timeout 600 .build/release/record-bench
	$(MAKE) deps APT_PACKAGES=ffmpeg PIP_PACKAGES=
	$(SWIFT) build -c release --product meter-bench
	timeout 600 .build/release/meter-bench


clean:
	rm -rf .build .build-rtsan Benchmarks/bin
