# hev2 — `make` builds, `make test` runs every test, `make demo` runs the main
# job, `make bench` prints the side-by-side benchmarks.
#
# Each part of the project adds its own targets in mk/<part>.mk by appending
# to BUILD_TARGETS, TEST_TARGETS, BENCH_TARGETS and DEB_PACKAGES.

GO     ?= go
BUILD  := build
export CGO_ENABLED := 1

BUILD_TARGETS :=
TEST_TARGETS  :=
BENCH_TARGETS :=
DEB_PACKAGES  :=

include $(sort $(wildcard mk/*.mk))

.PHONY: all build test bench demo deps clean
all: build

build: $(BUILD_TARGETS)

# deps installs the Debian packages the tests need (as root, via apt-get) and
# fetches the Go modules, so that `make test` works on a fresh machine.
deps:
	@scripts/install-deps.sh $(sort $(DEB_PACKAGES))
	$(GO) mod download

test: deps
	$(MAKE) build
	@set -e; for t in $(TEST_TARGETS); do echo "== $$t"; $(MAKE) --no-print-directory $$t; done
	@echo "== all tests passed"

bench: deps
	$(MAKE) build
	@set -e; for t in $(BENCH_TARGETS); do echo "== $$t"; $(MAKE) --no-print-directory $$t; done

# demo: the main job on loopback, without root and without DNS: the
# hev2-connect tool (C, over libhev2.so) racing ::1 (SYNs dropped) against
# 127.0.0.1, printed as a timeline (mk/capi.mk).
demo: demo-capi

clean:
	rm -rf $(BUILD)
