# fuzz: Go native fuzz targets (go test -fuzz) of every parser of outside
# text: capi's static_hosts, nameservers, local_host and alpn (capi/internal/cparse),
# ports (engine.ParsePort), hosts and resolv.conf files, and the built-in
# resolver's reply handling (parseReply, answerAddrs, and the lenient
# reading of HTTPS records, serviceAnswer), and the C ABI's
# conversion of a whole hev2_options (capi: every int field any value, each
# string NULL or anything).
#
# Each target's seeds (f.Add, plus testdata/fuzz/<Target>/ in its package)
# also run as plain tests in every `go test`. `make test` runs each target
# for FUZZTIME (30,000 inputs, a few seconds each); `make fuzz` for
# FUZZ_LONG each (default 5 min: `make fuzz FUZZ_LONG=1h`), or one target:
#   go test -run '^$' -fuzz '^FuzzParseReply$' -fuzztime 1h ./internal/resolve
# An input that fails is written to the package's testdata/fuzz/<Target>/:
# commit it with the fix, and it stays a test. FUZZ_PARALLEL workers (2:
# the machines are shared); the corpus grown meanwhile stays in go env
# GOCACHE, nothing is written under $(BUILD).
TEST_TARGETS += test-fuzz

FUZZ_TARGETS := \
	./capi/internal/cparse:FuzzStaticHosts \
	./capi/internal/cparse:FuzzNameservers \
	./capi/internal/cparse:FuzzLocalHost \
	./capi/internal/cparse:FuzzALPN \
	./internal/engine:FuzzParsePort \
	./internal/resolve:FuzzParseHosts \
	./internal/resolve:FuzzParseResolvConf \
	./internal/resolve:FuzzAnswerAddrs \
	./internal/resolve:FuzzParseReply \
	./internal/resolve:FuzzServiceAnswer \
	./capi:FuzzConvertOptions
# The short runs are counted in executions, not seconds: with a duration,
# Go 1.26's fuzz coordinator can report "context deadline exceeded" as a
# failure when the time runs out while a worker is mid-input on a loaded
# machine (golang/go#75804, fixed in Go 1.27): a flake with no input found.
FUZZTIME      ?= 30000x
FUZZ_LONG     ?= 5m
FUZZ_PARALLEL ?= 2

# $(call fuzz-each,TIME): every target in turn for TIME.
define fuzz-each
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; echo "-- $$fn ($$pkg, $(1))"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(1) -fuzzminimizetime 2s \
	    -parallel $(FUZZ_PARALLEL) $$pkg; \
	done
endef

.PHONY: test-fuzz fuzz
test-fuzz: ## a short run of every Go fuzz target (FUZZTIME each, 30000 inputs)
	$(call fuzz-each,$(FUZZTIME))

fuzz: ## every Go fuzz target for FUZZ_LONG each (5m; make fuzz FUZZ_LONG=1h)
	$(call fuzz-each,$(FUZZ_LONG))
