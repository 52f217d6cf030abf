# core: the RFC 8305 engine and its Go API.
TEST_TARGETS  += test-core
BENCH_TARGETS += bench-core
DEB_PACKAGES  += strace

.PHONY: test-core bench-core
test-core:
	@out=$$(gofmt -l core capi cmd internal examples 2>/dev/null); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -race -count=1 ./core/...

bench-core:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./core/
