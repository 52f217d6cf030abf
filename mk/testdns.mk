# testdns: hev2-testdns (tests/cmd/hev2-testdns), the project's test DNS
# server (tests/testdns) as a command, for the tests written in other
# languages: the Python and Ruby tests start it (bindings/python/tests/
# testdns.py, bindings/ruby/test/testdns.rb), script its answers over its
# stdin and read the queries it received. mk/python.mk and mk/ruby.mk give
# them its path in HEV2_TESTDNS and make their test targets depend on
# `testdns`.
BUILD_TARGETS += testdns
TEST_TARGETS  += test-testdns

TESTDNS_BIN := $(BUILD)/hev2-testdns
TESTDNS_GO_SOURCES = $(shell find tests/cmd/hev2-testdns tests/testdns -name '*.go' -not -name '*_test.go') go.mod go.sum

.PHONY: testdns test-testdns
testdns: $(TESTDNS_BIN) ## build hev2-testdns, the test DNS server of the Python and Ruby tests

$(TESTDNS_BIN): $(TESTDNS_GO_SOURCES)
	@mkdir -p $(BUILD)
	$(GO) build -o $@ ./tests/cmd/hev2-testdns

# Its own tests drive it in-process over pipes, on loopback (no root).
test-testdns: ## hev2-testdns's own tests: answers, holds, commands, exits (loopback, no root)
	$(GO) test -race -count=1 ./tests/cmd/hev2-testdns/
