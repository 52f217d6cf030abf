# core: the RFC 8305 engine and its Go API.
TEST_TARGETS  += test-core
BENCH_TARGETS += bench-core
DEB_PACKAGES  += strace

.PHONY: test-core bench-core
# (gofmt and go vet of the whole module: make lint.)
# The engine (internal/...) is tested with its API; the namespace tests of
# tests/ run in their own targets (test-resolvers, test-testbed ...).
test-core: ## the Go tests of core and the engine (internal/...) with -race
	$(GO) test -race -count=1 ./core/... ./internal/... ./tests/racescript/ ./tests/loopbacktest/

# bench-core: hev2 beside net.Dialer in one run (ns/op, B/op, allocs/op),
# DialContext vs net.Dialer interleaved (median per-round ratio, spread),
# then syscalls per connect counted by strace over real processes
# (Connect, then DialContext, each beside net.Dialer).
bench-core: ## hev2 beside net.Dialer: go test -bench, dialbench rounds, syscalls per connect
	$(GO) test -c -o $(BUILD)/core.bench ./bench/core/
	cd bench/core && $(FRESH_NETNS) $(abspath $(BUILD))/core.bench -test.run '^$$' -test.bench . -test.benchmem -test.count=1
	$(GO) build -o $(BUILD)/dialbench ./bench/dialbench
	$(FRESH_NETNS) $(BUILD)/dialbench -rounds 21 -n 300
	$(GO) build -o $(BUILD)/syscount ./bench/syscount
	scripts/syscalls-per-connect.sh $(BUILD)/syscount 2000
	@echo "--- DialContext (hev2 below) vs net.Dialer"
	scripts/syscalls-per-connect.sh $(BUILD)/dialbench 2000
