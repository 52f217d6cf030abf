# flake-check: the tests run FLAKE_RUNS times each while a CPU hog keeps
# every core busy, and a table of runs and failures per test (not part of
# `make test`; scripts/flake-check.py does the work). Parts (FLAKE_PARTS):
#   go         every Go package with tests, -race -count=FLAKE_RUNS (go test -json)
#   c          each C test program of tests/c (CAPI_TESTS), FLAKE_RUNS times
#   scenarios  the scenario suite with every client `make test` runs it with
#              (Go system/builtin, hev2-connect --json x5, Python blocking and
#              asyncio x system/builtin, the Ruby client on each of RUBIES)
# FLAKE_GO_PACKAGES and FLAKE_CLIENTS (regexps) narrow the go and scenarios
# parts to some packages (path in the module) and clients (hev2-go,
# hev2-go-builtin, hev2-c[-waiter][-builtin], hev2-c-nameserver,
# hev2-python[-asyncio][-builtin], hev2-ruby-VERSION), e.g.
#   make flake-check FLAKE_RUNS=3 FLAKE_PARTS="go scenarios" FLAKE_GO_PACKAGES=^core FLAKE_CLIENTS='^hev2-(go|c)$$'
# Logs of every run, the table and the failures' output: $(FLAKE_DIR).
# FLAKE_HOG spinning processes (default: one per CPU; 0: no hog). Root (the
# namespace tests, the suite). Exit status 1 when any run failed.
FLAKE_RUNS        ?= 10
FLAKE_PARTS       ?= go c scenarios
FLAKE_GO_PACKAGES ?=
FLAKE_CLIENTS     ?=
FLAKE_HOG         ?=
FLAKE_DIR         := $(BUILD)/flake

# Only what the chosen parts need is built (the Rubies only for scenarios).
FLAKE_DEPS := capi \
	$(if $(filter c,$(FLAKE_PARTS)),$(CAPI_TEST_BINS)) \
	$(if $(filter scenarios,$(FLAKE_PARTS)),testbed-tools rubies ruby-ext)

.PHONY: flake-check
flake-check: $(FLAKE_DEPS) ## FLAKE_RUNS (10) runs of the Go, C and scenario tests under a CPU hog: failures per test (FLAKE_PARTS, root)
	@$(PYTHON_DEB) scripts/flake-check.py --runs $(FLAKE_RUNS) --parts "$(FLAKE_PARTS)" \
		--out $(FLAKE_DIR) --build $(BUILD) --go $(GO) \
		--c-tests "$(CAPI_TESTS)" --c-dlopen "$(CAPI_DLOPEN_TESTS)" \
		--rubies "$(RUBIES)" --ruby-ext-dir $(RUBY_EXT_DIR) \
		$(if $(FLAKE_GO_PACKAGES),--go-packages '$(FLAKE_GO_PACKAGES)') \
		$(if $(FLAKE_CLIENTS),--clients '$(FLAKE_CLIENTS)') $(if $(FLAKE_HOG),--hog $(FLAKE_HOG))
