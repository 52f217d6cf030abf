# abi: the bindings' mirrors of include/hev2.h, generated (tools/abigen).
# The header is the one source of truth: the generator reads its constants,
# struct members and the @option note of each hev2_options member, measures
# every value, sizeof and offsetof with the C compiler, and writes
#   bindings/python/src/hev2/_abi_gen.py      constants, name tables, ctypes structs
#   bindings/ruby/lib/hev2/abi.rb             constants, name tables, sizes, offsets
#   capi/abi_check.go                         compile-time checks of core's kinds
#   bindings/python/src/hev2/_options_gen.py  the plain options: keywords, checks,
#   bindings/ruby/lib/hev2/plain_options.rb   units and struct filling per binding
#   capi/options_gen.go, capi/options_gen.h   their conversion into core, defaults
# After editing hev2.h: `make abi-generate`, and commit the result.
ABIGEN       := $(GO) run ./tools/abigen
ABIGEN_FLAGS  = -cc $(CC) -python-exe /usr/bin/python3 -workdir $(abspath $(BUILD))/abigen

TEST_TARGETS += abi-check
DEB_PACKAGES += gcc libc6-dev python3

.PHONY: abi-generate abi-check

# Writes the generated files from include/hev2.h.
abi-generate: ## rewrite the bindings' ABI mirrors, plain options and capi's generated files from include/hev2.h
	$(ABIGEN) $(ABIGEN_FLAGS)

# Fails when a checked-in generated file differs from what include/hev2.h
# gives now (run in CI through TEST_TARGETS); the generator's own tests
# (members and constants appended to a copy of the header) first.
abi-check: ## the generator's tests, then fail if a generated ABI file is stale
	$(GO) test -count=1 ./tools/abigen
	$(ABIGEN) $(ABIGEN_FLAGS) -check
