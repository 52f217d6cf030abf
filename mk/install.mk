# install: docs/install.md, for what no other target checks.
# (The gems: test-dist-ruby; the wheels and the sdist: test-dist-python; make install with
# pkg-config: test-capi-install.)
TEST_TARGETS += test-go-module

.PHONY: test-go-module

# The Go module as docs/install.md tells a program to use it (the module is not
# on the module proxy, so from a checkout, through a replace directive): a
# scratch module holding examples/go-race builds against this tree and runs.
# Offline: the dependencies come from the module cache (make deps fills it)
# and are checked against this tree's go.sum.
test-go-module: ## docs/install.md's Go module steps in a scratch module (replace => this tree), offline: build and run examples/go-race
	@set -e; d=$$(mktemp -d); trap 'rm -rf $$d' EXIT; \
	cp examples/go-race/main.go go.sum $$d/; cd $$d; \
	$(GO) mod init example.com/app 2>/dev/null; \
	$(GO) mod edit -replace github.com/hev2/hev2=$(CURDIR); \
	GOPROXY=off GOFLAGS=-mod=mod $(GO) mod tidy; \
	GOPROXY=off $(GO) build -o app .; \
	out=$$(./app | tail -1); echo "$$out"; echo "$$out" | grep -q '^connected to 127.0.0.1'; \
	echo "go module: a program outside this tree builds against github.com/hev2/hev2/core and connects"
