# resolvers: the system resolver (getaddrinfo per family on bounded C
# threads) and the built-in DNS resolver. Their unit tests live in
# internal/resolve and run with test-core; the tests here
# (tests/resolvertest) need network namespaces (getaddrinfo
# is only ever run inside one of the project's own, against a test DNS
# server).
# The scenario suite runs with each resolver in test-testbed.
BUILD_TARGETS += $(BUILD)/hev2-resolve
TEST_TARGETS  += test-resolvers
BENCH_TARGETS += bench-resolvers
DEB_PACKAGES  += iproute2 gcc libc6-dev

.PHONY: test-resolvers bench-resolvers
# tests/resolvertest runs twice: every test without -race (the race
# detector cannot hold the 10,000 concurrent lookups of the flood test), then
# every other test with -race (its children are race-enabled too).
test-resolvers: ## the resolvers' namespace tests (root; tests/resolvertest)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-resolvers needs root (network namespaces); only the loopback unit tests run"; fi
	$(GO) test -count=1 -v ./tests/resolvertest/
	$(GO) test -race -count=1 -skip 'Flood' ./tests/resolvertest/

# The plain C baseline of the benchmarks.
$(BUILD)/gai_loop: tests/resolvertest/cbench/gai_loop.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $<

bench-resolvers: $(BUILD)/gai_loop ## system and built-in resolver vs a plain getaddrinfo loop
	$(GO) build -o $(BUILD)/resolverbench ./tests/resolvertest/resolverbench
	$(BUILD)/resolverbench -gai-loop $(BUILD)/gai_loop

# hev2-resolve: look a name up as hev2 does (both families at once) and
# print each family's answer or getaddrinfo code, errno and the counters.
$(BUILD)/hev2-resolve: $(shell find tests/cmd/hev2-resolve core internal -name '*.go' -not -name '*_test.go') go.mod go.sum
	$(GO) build -o $@ ./tests/cmd/hev2-resolve
