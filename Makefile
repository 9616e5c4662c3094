# JackAudioSession: every step installs what it needs itself (idempotent).
#   make run    install, build, run `jas selftest` on a private jackd
#   make test   install, build once (release, with testable imports), run the whole suite (its PipeWire tests on the
#               system's PipeWire and again on bookworm-backports' PipeWire 1.4; in two shards side by side while a core
#               is idle, through scripts/test-shards.py; TEST_SHARDS=1 for one) with install-check, docs and the example
#               package's build beside it at nice 19, `make bench-smoke` beside the classes the shards leave to run
#               alone (after the suite with one shard), then `make rtsan` and `make example-check`
#   make rtsan  the loopback test with RealtimeSanitizer inside the callback
#   make bench  every benchmark against its reference (not part of test; make test runs each briefly)
#   make install [PREFIX=/usr/local] [DESTDIR=]   the release jas, man page, completions; make uninstall
#   make docs   the library's API documentation (DocC archives in .build/docs)
#   make soak   jas monitor, record and meter through 1000 jackd restarts, and 500 killed sessions (not part of test)

SHELL := /bin/bash
, := ,
.SHELLFLAGS := -eu -o pipefail -c
SWIFT ?= swift
# libkissfft-dev: the analyzer's FFT (BSD-3-Clause). sox: the tests open recordings with it too; tmux: the live meter is tested in a real terminal of a given size; gdb: a test stops a program inside jackd's metadata store to kill it there;
# chromium, chromium-driver: the --http page is tested in a real browser. From PyPI: pyloudnorm, the second loudness
# implementation the tests compare with (ffmpeg's ebur128 the true peak); numpy: scripts/make-ebu-signals.py computes the EBU
# test signals with it; scipy: the analyzer's outside reference (scripts/harmonics-scipy.py); prometheus: the shipped alerting rules run in a real one; prometheus_client, websockets and
# selenium read the --http server as users do.
APT_PACKAGES := jackd2 libjack-jackd2-dev libsndfile1-dev libebur128-dev libkissfft-dev libssl-dev sox gdb tmux systemd chromium chromium-driver pipewire pipewire-bin pipewire-jack prometheus ffmpeg
PIP_PACKAGES := numpy scipy pyloudnorm prometheus_client websockets selenium
# The toolchain's clang ships RealtimeSanitizer's runtime.
CLANG := $(dir $(realpath $(shell command -v $(SWIFT))))clang
RTSAN_RUNTIME = $(shell $(CLANG) -print-resource-dir)/lib/linux/libclang_rt.rtsan-x86_64.a
RTSAN_LINK = -Xlinker --whole-archive -Xlinker $(RTSAN_RUNTIME) -Xlinker --no-whole-archive -Xlinker --export-dynamic
RTSAN_PIDS := .build-rtsan/servers
export JACK_NO_AUDIO_RESERVATION := 1
# The suite's shards side by side (scripts/test-shards.py): two while a core or more is idle when the suite starts (beside
# a busy core too), about half the time of one. TEST_SHARDS=1 runs the classes one after another.
TEST_SHARDS ?= auto

.PHONY: docs docs-files deps build release install install-files uninstall install-check example-check side-builds run test pipewire-1.4 pipewire-lane rtsan bench bench-tools bench-smoke bench-smoke-runs baseline-jas soak clean

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

# How the tests are built: debug by default (`make rtsan`, `make pipewire-lane` alone). `make test` compiles once:
# every product and the tests in release with testable imports, one build for the suite, the PipeWire lane,
# RealtimeSanitizer, bench-smoke and install-check. Here a clean build took 9.7 minutes that way, against 5.4 (debug
# with tests) plus 8.6 (release); the suite's CPU-bound tests (loudness, true peak, the tool started hundreds of
# times) run faster too. `make release` and `make install` alone build as users do, without testable imports.
TESTABLE := -Xswiftc -enable-testing
TEST_BUILD ?=
RELEASE_FLAGS ?=
IN_ONE_BUILD := TEST_BUILD="-c release $(TESTABLE)" RELEASE_FLAGS="$(TESTABLE)"

# Each phase says when it starts, so a slow one shows in the log.
PHASE = @echo "== $(1): $$(date -u +%H:%M:%S)"
test: deps pipewire-1.4
	$(call PHASE,build)
	$(SWIFT) build -c release --build-tests $(TESTABLE)
	$(call PHASE,swift test; beside it at nice 19: install-check$(,) docs$(,) the example package's build; bench-smoke beside the classes that run alone)
	(sleep 5; exec nice -n 19 $(MAKE) --no-print-directory side-builds $(IN_ONE_BUILD)) > .build/side-builds.log 2>&1 & side=$$!; \
	status=0; \
	python3 scripts/test-shards.py --shards $(TEST_SHARDS) --bundle .build/release/JackAudioSessionPackageTests.xctest \
	  --again JAS_PIPEWIRE_ROOT=$(CURDIR)/$(PIPEWIRE_1_4)/root PipeWireTests \
	  --beside-alone 'nice -n 10 $(MAKE) --no-print-directory bench-tools bench-smoke-runs' || status=$$?; \
	echo "== the builds beside the suite: $$(date -u +%H:%M:%S)"; \
	if wait $$side; then cat .build/side-builds.log; else cat .build/side-builds.log; echo "side-builds failed"; status=1; fi; \
	exit $$status
	$(call PHASE,rtsan)
	$(MAKE) rtsan $(IN_ONE_BUILD)
	$(call PHASE,example-check)
	$(MAKE) example-check
	$(call PHASE,done)

# What make test builds beside the suite (CPU only, no server; at nice 19 there, so the suite's servers keep their
# time; 5 s after it starts, once test-shards has counted the idle cores, which the builds' system time had hidden): the install into a scratch folder, the API documentation and the example package (example-check runs it
# after the suite, against a server of its own).
side-builds:
	$(MAKE) --no-print-directory install-check INSTALL_CHECK_TARGET=install-files
	$(MAKE) --no-print-directory docs-files
	cd Examples/DependentPackage && $(SWIFT) build

# The backports suite's PipeWire (1.4), unpacked beside the system's (0.3.65), which stays installed.
PIPEWIRE_1_4 := .build-pipewire-1.4
pipewire-1.4: deps
	scripts/unpack-pipewire-backports.sh $(PIPEWIRE_1_4)

# The PipeWire tests on PipeWire 1.4 (the whole suite runs them on the system's PipeWire).
pipewire-lane: pipewire-1.4
	JAS_PIPEWIRE_ROOT=$(CURDIR)/$(PIPEWIRE_1_4)/root $(SWIFT) test $(TEST_BUILD) --skip-build --filter 'PipeWireTests'

# The sanitizer is only linked in, into the test bundle (and jas, which it depends on), in the same build folder; the
# next build relinks them without. Only that product: in CI, linking every product with it took 103 s and the relink
# back 40 s, against 90 s and 38 s (a change of link flags also recompiles Hummingbird and the test modules).
rtsan: deps
	$(SWIFT) build $(TEST_BUILD) --product JackAudioSessionPackageTests $(RTSAN_LINK)
	# 1. The measurement loopback, the latency probe, the multiRoute player, the analyzer's stimulus recorder and the recorder run with the sanitizer watching the callback.
	$(SWIFT) test $(TEST_BUILD) --skip-build \
	  --filter 'LoopbackBitExactTests.testTenSecondsBitExactAtPeriod64|RealtimeSafetyTests.testLatencyProbeAllocatesNothingWhileMeasuring|RealtimeSafetyTests.testMultiroutePlayerAllocatesNothing|RealtimeSafetyTests.testTheAnalyzersStimulusRecorderAllocatesNothing|RecordRealtimeTests'
	# 2. The canary: a callback that allocates must be stopped by the sanitizer.
	mkdir -p $(RTSAN_PIDS)
	if JAS_SERVER_PID_DIR=$(RTSAN_PIDS) $(SWIFT) test $(TEST_BUILD) --skip-build \
	     --filter 'RealtimeSafetyTests.testCounterSeesAnAllocatingCallback' > .build-rtsan/canary.log 2>&1; then \
	  echo "rtsan: the allocating callback was NOT caught"; status=1; \
	elif grep -q 'ERROR: RealtimeSanitizer' .build-rtsan/canary.log; then \
	  echo "rtsan: the allocating callback was caught, as it must be"; status=0; \
	else \
	  cat .build-rtsan/canary.log; echo "rtsan: the canary failed for another reason"; status=1; \
	fi; \
	for file in $(RTSAN_PIDS)/*.pid; do [ -e "$$file" ] && kill "$$(cat "$$file")" 2>/dev/null; rm -f "$$file"; done; \
	exit $$status

release: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS)

# The release jas, its man page (swift-argument-parser's generate-manual tool, built as a product of the release build:
# its plugin builds the whole package again under other parameters, and the next `swift build -c release` then
# rebuilds everything too, 2.7 minutes each way here),
# bash, zsh and fish completions, and the logger's systemd unit template, where
# distributions put them.
PREFIX ?= /usr/local
DESTDIR ?=
INSTALLED := $(DESTDIR)$(PREFIX)/bin/jas $(DESTDIR)$(PREFIX)/share/man/man1/jas.1 \
  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/jas $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_jas \
  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/jas.fish
UNIT := $(DESTDIR)$(PREFIX)/lib/systemd/system/jas-record@.service
# For the fleet's Prometheus and Grafana: the alerting rules and a dashboard.
CONTRIB := $(DESTDIR)$(PREFIX)/share/jas/prometheus/jas-alerts.yml $(DESTDIR)$(PREFIX)/share/jas/grafana/jas-dashboard.json
install: release
	$(MAKE) --no-print-directory install-files

# What install does with the release build made: make test runs it (through install-check) beside the suite, where a
# build of the package could relink the jas the tests run (a "Text file busy" seen when Hummingbird recompiled).
# generate-manual's build touches nothing the tests run.
install-files:
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product generate-manual
	rm -rf .build/man .build/man-pages && mkdir -p .build/man .build/man-pages
	.build/release/generate-manual .build/release/jas --output-directory .build/man
	.build/release/generate-manual .build/release/jas --multi-page --output-directory .build/man-pages
	install -Dm755 .build/release/jas $(DESTDIR)$(PREFIX)/bin/jas
	install -Dm644 .build/man/jas.1 $(DESTDIR)$(PREFIX)/share/man/man1/jas.1
	# A page per command, as man finds it: jas.record.1 becomes jas-record.1 (man jas-record).
	for page in .build/man-pages/jas.*.1; do \
	  name=$$(basename "$$page" .1); case "$$name" in jas.help) continue;; esac; \
	  install -Dm644 "$$page" "$(DESTDIR)$(PREFIX)/share/man/man1/$$(echo "$$name" | tr . -).1"; \
	done
	for shell in bash zsh fish; do .build/release/jas --generate-completion-script $$shell > .build/jas-completion.$$shell; done
	install -Dm644 .build/jas-completion.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/jas
	install -Dm644 .build/jas-completion.zsh $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_jas
	install -Dm644 .build/jas-completion.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/jas.fish
	sed 's|@BINDIR@|$(PREFIX)/bin|g' systemd/jas-record@.service > .build/jas-record@.service
	install -Dm644 .build/jas-record@.service $(UNIT)
	install -Dm644 contrib/prometheus/jas-alerts.yml $(DESTDIR)$(PREFIX)/share/jas/prometheus/jas-alerts.yml
	install -Dm644 contrib/grafana/jas-dashboard.json $(DESTDIR)$(PREFIX)/share/jas/grafana/jas-dashboard.json

uninstall:
	rm -f $(INSTALLED) $(UNIT) $(CONTRIB) $(DESTDIR)$(PREFIX)/share/man/man1/jas-*.1

# docs/LIBRARY.md's Package.swift: a package that depends on this one by path builds (part of make test),
# and its seed-listings (the guide's listings written for this library) run against a private jackd.
example-check: deps
	cd Examples/DependentPackage && $(SWIFT) build
	# The seeds' catch from top-level code; no server needed (the refusal comes first), none is started.
	JACK_DEFAULT_SERVER=catch-check-no-server timeout 60 Examples/DependentPackage/.build/debug/catch-check
	scratch=$$(mktemp -d); server=seed-listings-$$$$; \
	JACK_NO_AUDIO_RESERVATION=1 jackd -n $$server -r -d dummy -r 48000 -p 256 > $$scratch/jackd.log 2>&1 & jackd=$$!; \
	trap 'kill $$jackd 2>/dev/null; wait $$jackd 2>/dev/null; rm -rf "$$scratch"' EXIT; \
	for attempt in $$(seq 100); do test -S /dev/shm/jack_$${server}_$$(id -u)_0 && break; sleep 0.1; done; \
	for attempt in $$(seq 100); do jack_lsp -s $$server > /dev/null 2>&1 && break; sleep 0.1; done; \
	JACK_DEFAULT_SERVER=$$server XDG_CONFIG_HOME=$$scratch timeout 120 Examples/DependentPackage/.build/debug/seed-listings \
	  || { echo "example-check: seed-listings failed; jackd said:"; cat $$scratch/jackd.log; exit 1; }

# The DocC archives of the library modules, from the release build (part of make test; open
# .build/docs/MODULE.doccarchive with docc preview, or serve it).
DOC_MODULES := JackAudioSession Measurement Recording Metering
docs: release
	$(MAKE) --no-print-directory docs-files

docs-files:
	scripts/build-docs.sh .build/release .build/docs $(DOC_MODULES)

# make install into a scratch folder: every file is there and names every subcommand (part of make test).
INSTALL_CHECK_TARGET ?= install
install-check:
	scratch=$$(mktemp -d); trap 'rm -rf "$$scratch"' EXIT; \
	$(MAKE) --no-print-directory $(INSTALL_CHECK_TARGET) DESTDIR=$$scratch PREFIX=/usr > $$scratch.log 2>&1 || { cat $$scratch.log; exit 1; }; \
	$$scratch/usr/bin/jas --version | grep -q '^jas .* libjack ' || { echo "install-check: jas --version"; exit 1; }; \
	for command in $$($$scratch/usr/bin/jas --help | sed -n '/^SUBCOMMANDS:/,/^$$/p' | awk '/^  [a-z]/ { print $$1 }'); do \
	  for file in $(subst $(DESTDIR)$(PREFIX),$$scratch/usr,$(filter-out %/bin/jas,$(INSTALLED))); do \
	    grep -q -- "$$command" "$$file" || { echo "install-check: $$file does not mention '$$command'"; exit 1; }; \
	  done; \
	done; \
	for command in $$($$scratch/usr/bin/jas --help | sed -n '/^SUBCOMMANDS:/,/^$$/p' | awk '/^  [a-z]/ { print $$1 }'); do \
	  page=$$scratch/usr/share/man/man1/jas-$$command.1; \
	  [ -s "$$page" ] && grep -q -- "$$command" "$$page" || { echo "install-check: no page $$page (man jas-$$command)"; exit 1; }; \
	done; \
	[ -s $$scratch/usr/share/man/man1/jas-analyze-thd.1 ] || { echo "install-check: no page for jas analyze thd"; exit 1; }; \
	unit=$$scratch/usr/lib/systemd/system/jas-record@.service; \
	printf 'JAS_RECORD_OPTIONS=--output /tmp/x.wav\n' > $$scratch/record-check.conf; \
	sed -e "s|/usr/bin/jas|$$scratch/usr/bin/jas|g" -e "s|/etc/jas/record-%i.conf|$$scratch/record-check.conf|" "$$unit" \
	  > $$scratch/jas-record@check.service; \
	systemd-analyze verify --man=no $$scratch/jas-record@check.service || { echo "install-check: systemd-analyze verify refuses $$unit"; exit 1; }; \
	promtool check rules $$scratch/usr/share/jas/prometheus/jas-alerts.yml > /dev/null || { echo "install-check: promtool refuses the alerting rules"; exit 1; }; \
	python3 -m json.tool $$scratch/usr/share/jas/grafana/jas-dashboard.json > /dev/null || { echo "install-check: the Grafana dashboard is not JSON"; exit 1; }; \
	echo "install-check: jas, its man pages (one per command), bash/zsh/fish completions, the systemd unit, the Prometheus rules and the Grafana dashboard install; every subcommand is named; systemd-analyze and promtool accept what they check"

# What the benchmarks compare with: jack_delay, jack_capture, ffmpeg, and the C reference client.
bench-tools: deps
	$(MAKE) deps APT_PACKAGES="jack-delay jack-capture ffmpeg" PIP_PACKAGES=
	mkdir -p Benchmarks/bin
	cc -O2 -Wall -IBenchmarks/CReference/include -o Benchmarks/bin/c-passthrough \
	  Benchmarks/CReference/main.c Benchmarks/CReference/passthrough.c -ljack

# The commit before the session registry (session state in JACK metadata, polled): the arbitration benchmark's reference.
REGISTRY_BASELINE := 2f3a2f584dca6e63e0016b0864e70f96ffb07625

# jas as it was at REGISTRY_BASELINE, built in a worktree of its own (.build-baseline/).
baseline-jas:
	if [ ! -d .build-baseline/src ]; then git worktree add --force --detach .build-baseline/src $(REGISTRY_BASELINE); fi
	$(SWIFT) build -c release --package-path .build-baseline/src --product jas

bench: release bench-tools baseline-jas pipewire-1.4
	.build/release/callback-bench --c-reference Benchmarks/bin/c-passthrough
	timeout 600 .build/release/callback-bench --c-reference Benchmarks/bin/c-passthrough --pipewire
	JAS_PIPEWIRE_ROOT=$(CURDIR)/$(PIPEWIRE_1_4)/root timeout 600 .build/release/callback-bench \
	  --c-reference Benchmarks/bin/c-passthrough --pipewire
	timeout 900 .build/release/arbitration-bench --jas "metadata (before)=.build-baseline/src/.build/release/jas" \
	  --jas "registry (now)=.build/release/jas"
	timeout 600 .build/release/recovery-bench
	timeout 600 .build/release/latency-bench
	timeout 900 .build/release/record-bench --per-second
	timeout 600 .build/release/record-bench --programme
	timeout 600 .build/release/meter-bench
	timeout 600 .build/release/analyzer-bench --memory --jas .build/release/jas
	timeout 600 .build/release/watch-bench

# A /dev/shm of its own (a mount namespace; root), for the soak that removes JACK's server registry at every restart:
# the registry of this machine's servers is not touched. Each command then starts itself again in a new process; one
# whose libjack wedges instead exits 75 and the soak starts it again, as systemd's Restart=on-failure would.
PRIVATE_SHM := unshare --mount --ipc --propagation private -- /bin/sh -c 'mount -t tmpfs -o mode=1777 jas-soak /dev/shm && exec "$$0" "$$@"'

# Every benchmark binary of the release build, briefly, so that none can rot (part of make test).
bench-smoke: release bench-tools
	$(MAKE) --no-print-directory bench-smoke-runs

# The runs alone, on the release build made: make test runs them beside the classes that run alone, where a build of
# the package could relink the jas those run.
bench-smoke-runs:
	timeout 300 .build/release/callback-bench --c-reference Benchmarks/bin/c-passthrough --cycles 300 --rounds 2
	timeout 300 .build/release/callback-bench --c-reference Benchmarks/bin/c-passthrough --cycles 300 --rounds 2 --pipewire
	timeout 300 .build/release/recovery-bench --restarts 3
	timeout 300 .build/release/latency-bench --readings 2
	timeout 300 .build/release/record-bench --seconds 2 --channels 8 --programme --per-second
	timeout 300 .build/release/meter-bench --seconds 2 --cycles 300
	timeout 300 .build/release/analyzer-bench --seconds 2 --rounds 1
	timeout 300 .build/release/watch-bench --seconds 2 --browser no
	timeout 300 .build/release/restart-soak --restarts 5
	timeout 300 .build/release/arbitration-bench --runs 2

# jas monitor, record and meter through 1000 jackd restarts (about 20 minutes), through 300 more with the registry
# removed at each (about 11 minutes), and 500 sessions killed at random moments on one jackd (make test kills 100);
# not part of make test.
soak: release bench-tools
	timeout 3600 .build/release/restart-soak --restarts 1000
	timeout 3600 $(PRIVATE_SHM) .build/release/restart-soak --restarts 300 --remove-registry
	$(SWIFT) build --build-tests
	JAS_KILLED_SESSIONS=500 $(SWIFT) test --skip-build --filter 'KilledSessionsTests.testHundredsOfKilledSessionsLeaveArbitrationWorking\b'


clean:
	rm -rf .build .build-rtsan Benchmarks/bin $(PIPEWIRE_1_4)
	git worktree remove --force .build-baseline/src 2>/dev/null || true
	rm -rf .build-baseline
