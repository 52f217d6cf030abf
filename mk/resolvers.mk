# resolvers: the system resolver (getaddrinfo per family on bounded C
# threads) and the built-in DNS resolver. Their unit tests live in core/ and
# run with test-core; the tests here need network namespaces (getaddrinfo is
# only ever run inside one of the project's own, against a test DNS server).
TEST_TARGETS  += test-resolvers
BENCH_TARGETS += bench-resolvers
DEB_PACKAGES  += iproute2 gcc libc6-dev

.PHONY: test-resolvers bench-resolvers
test-resolvers:
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-resolvers needs root (network namespaces); only the loopback unit tests run"; fi
	$(GO) vet ./internal/resolvertest/
	$(GO) test -race -count=1 -run 'System|DNS|Hosts|ResolvConf|Flight' ./core/
	# No -race here: the race detector cannot hold the 10,000 concurrent lookups.
	$(GO) test -count=1 -v ./internal/resolvertest/
