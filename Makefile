# hev2 — `make` builds, `make test` runs every test, `make demo` runs the main
# job, `make bench` prints the side-by-side benchmarks.
#
# Each part of the project adds its own targets in mk/<part>.mk by appending
# to BUILD_TARGETS, TEST_TARGETS, BENCH_TARGETS and DEB_PACKAGES.
# Every phony target carries a `## what it does` comment on its rule line:
# `make help` lists them (and `make lint` fails on one without it).

GO     ?= go
BUILD  := build
export CGO_ENABLED := 1
# Benchmarks run under it: a network namespace of their own, so that no
# TIME_WAIT socket of an earlier run slows their loopback connects.
FRESH_NETNS := $(abspath scripts/fresh-netns.sh)

# `make` alone builds: the mk files below define rules of their own, and
# the first of them would otherwise be the default.
.DEFAULT_GOAL := all

BUILD_TARGETS :=
TEST_TARGETS  :=
BENCH_TARGETS :=
DEB_PACKAGES  :=
DIST_TARGETS      :=
DIST_TEST_TARGETS :=

include $(sort $(wildcard mk/*.mk))

.PHONY: all build test bench demo deps clean help
all: build ## build everything into $(BUILD)/ (the default goal)

build: $(BUILD_TARGETS) ## build every part (BUILD_TARGETS of mk/*.mk)

# deps installs the Debian packages the tests need (as root, via apt-get) and
# fetches the Go modules, so that `make test` works on a fresh machine.
deps: ## install the Debian packages of DEB_PACKAGES (root, apt-get) and fetch the Go modules
	@scripts/install-deps.sh $(sort $(DEB_PACKAGES))
	$(GO) mod download

test: deps ## deps, build, then every test target (TEST_TARGETS), lint included
	$(MAKE) build
	@set -e; for t in $(TEST_TARGETS); do echo "== $$t"; $(MAKE) --no-print-directory $$t; done
	@echo "== all tests passed"

bench: deps ## deps, build, then every benchmark (BENCH_TARGETS)
	$(MAKE) build
	@set -e; for t in $(BENCH_TARGETS); do echo "== $$t"; $(MAKE) --no-print-directory $$t; done

# demo: the main job on loopback, without root and without DNS: the
# hev2-connect tool (C, over libhev2.so) racing ::1 (SYNs dropped) against
# 127.0.0.1, printed as a timeline (mk/capi.mk).
demo: demo-capi ## a connection race on loopback printed as a timeline (no root, no DNS)

clean: ## remove $(BUILD)/
	rm -rf $(BUILD)

# Target names: test-<part>[-<what>], bench-<part>, package-<binding>,
# demo-<part>; a part's name alone builds it.
MAKEFILES_WITH_HELP := Makefile $(sort $(wildcard mk/*.mk))
help: ## list every target with one line each
	@awk -F ':[^#]*## ' '/^[A-Za-z0-9_.-]+:([^=]|$$).*## / { \
		if (FILENAME != last) { printf "%s%s:\n", (last == "" ? "" : "\n"), FILENAME; last = FILENAME } \
		printf "  %-22s %s\n", $$1, $$2 }' $(MAKEFILES_WITH_HELP)
